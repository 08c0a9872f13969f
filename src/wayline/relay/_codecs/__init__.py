"""Provider codecs: the implementation behind ``wayline.relay._codecs.openai_chat``."""
