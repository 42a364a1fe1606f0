"""The spec types plugins fill and the domain reads; the bottom layer, beside the models."""
