"""The one error of the format and of authentication, with the reason every implementation reports
(src/crypto/README.md, "Consuming")."""

REASONS = ('malformed', 'no-key', 'unwrap-failed', 'unknown-data-key', 'not-authentic')


class E2eError(Exception):
    """A record that cannot be sealed or opened; ``reason`` is one of REASONS."""

    def __init__(self, reason, message):
        if reason not in REASONS:
            raise ValueError('unknown reason %r' % (reason,))
        super().__init__(message)
        self.reason = reason

    def __str__(self):
        return '%s: %s' % (self.reason, self.args[0])


class EnvelopeFormatError(ValueError):
    """A header value that is not a well-formed envelope; the message says where and why."""
