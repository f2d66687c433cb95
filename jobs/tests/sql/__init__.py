"""The vendor layer's tests: what every store must do, on every database."""
