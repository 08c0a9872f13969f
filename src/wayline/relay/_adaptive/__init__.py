"""The adaptive component: its config documents (``config``) and runtime (``runtime``)."""
