"""Engine evidence parsers: text in, records out. No I/O beyond reading the stream they are given."""
