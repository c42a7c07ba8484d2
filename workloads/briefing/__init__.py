"""The daily briefing: yesterday's outcomes, what waits on you, and what runs next, sent
once a day through the notification outbox (README.md)."""
