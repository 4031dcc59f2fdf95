"""The agent's workspace: the folder of templates and state (`folder.Workspace`), its files written
atomically (`files`) or kept until the disk allows (`pending_writes`), the memory's entries
(`memory`), read and indexed again only when memory.json changed (`memory_index`), one read of
it per turn (`snapshot`) and one agent per workspace (`lock`)."""
