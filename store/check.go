package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// CheckFile opens the closed database at path read-only and checks bbolt's page
// consistency, the changelog chain and the relations' indexes and counters
// (CheckRelations). Tests call it after every test (storetest).
func CheckFile(path string) error {
	bdb, err := openBolt(path, Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return err
	}
	var errs []error
	err = bdb.View(func(tx *bolt.Tx) error {
		for e := range tx.Check() {
			errs = append(errs, e)
		}
		return nil
	})
	bdb.Close()
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return fmt.Errorf("bbolt consistency: %w", errors.Join(errs...))
	}
	db, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	r, err := db.VerifyChangelog(context.Background())
	if err != nil {
		return err
	}
	if !r.OK {
		return fmt.Errorf("changelog: %s", r.Problem)
	}
	problems, err := db.CheckRelations(context.Background())
	if err != nil {
		return err
	}
	return relationProblems(problems)
}
