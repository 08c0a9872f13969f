"""Provider codecs: the implementation behind ``wayline.relay.codecs``."""
