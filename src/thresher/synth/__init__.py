"""Synthetic data thresher owns: generated fictional worlds (``world``) and the attack suite (``attacks``)."""
