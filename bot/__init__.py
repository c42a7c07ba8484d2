"""Signoff's service: the scheduler, in-process workers and the Telegram bot around the queue."""
