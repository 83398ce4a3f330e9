"""Runnable examples for chapter 3, each `python -m stage1_scalargrad.examples.<name>`:
chain, bobnet, linear_fit, nonlinear_fit. Each prints its log and writes its figures."""
