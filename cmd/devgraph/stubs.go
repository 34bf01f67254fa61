package main

import "context"

func runServe(ctx context.Context, e *env, args []string) error { return usagef("not yet") }
func runQuery(ctx context.Context, e *env, args []string) error { return usagef("not yet") }
