"""Training: rewards, curriculum, SFT export, and fitting the local policy (``train.local``)."""
