"""Helper scripts of SafeClaw: the stack runner (run_stack.py) and its pieces."""
