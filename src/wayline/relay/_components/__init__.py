"""Component configuration: the plugin host behind ``wayline.relay.plugin``, plugins.toml."""
