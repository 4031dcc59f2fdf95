"""Telling the owner: alerts outside any conversation (budget, public actions, pauses of autonomy:
`alerts`, to owner_alerts.jsonl and Telegram) and the agent's own messages in a conversation (a late
router outcome: `conversation_notices`)."""
