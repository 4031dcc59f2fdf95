"""What the router refuses or holds back: the effect a command states (`effects`), the checks that decide
on it (`checks`), the live kill switch, approvals by the owner (`approvals`: the record and the owner's side;
`approval_store`: the router's side; `approval_flow`: from the hold to the one run; `approval_outcomes`:
how each ends) and what the owner is told (`owner_notices`)."""
