package main

func (e env) hello(args []string) error { return nil }
