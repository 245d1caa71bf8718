"""trio-local: an offline PyTRIO service that the real SDK talks to."""
