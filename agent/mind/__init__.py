"""The agent's mind: the Think-Act-Observe loop (`loop`), what a step's actions do (`act`), the prompt
it reads (`prompt`) and the parser of the model's reply (`tool_code`)."""
