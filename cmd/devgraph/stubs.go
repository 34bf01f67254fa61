package main

import "context"

func runServe(ctx context.Context, e *env, args []string) error   { return usagef("not yet") }
func runQuery(ctx context.Context, e *env, args []string) error   { return usagef("not yet") }
func runMigrate(ctx context.Context, e *env, args []string) error { return usagef("not yet") }
func runBackup(ctx context.Context, e *env, args []string) error  { return usagef("not yet") }
func runCompact(ctx context.Context, e *env, args []string) error { return usagef("not yet") }
func runExport(ctx context.Context, e *env, args []string) error  { return usagef("not yet") }
func runImport(ctx context.Context, e *env, args []string) error  { return usagef("not yet") }
func runDoctor(ctx context.Context, e *env, args []string) error  { return usagef("not yet") }

func (e *env) openLocal(ctx context.Context, c *common, db string) (*session, error) {
	return nil, usagef("not yet")
}
