"""What the router refuses or holds back: the effect a command states (`effects`), the checks that decide
on it (`checks`), the live kill switch, approvals by the owner (`approvals`, `approval_flow`) and what the
owner is told (`owner_notices`)."""
