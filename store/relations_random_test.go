package store_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// TestRelation_RandomWritesKeepIndexes runs a fixed-seed mix of relation writes and the
// identity cascades (relate, repeat, update, unrelate, delete, restore, merge) on a real
// file and checks the relations' indexes and counters (CheckRelations) after every write.
func TestRelation_RandomWritesKeepIndexes(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t) // two devices, usb:3-3.2 bound to jdxi
	rng := rand.New(rand.NewSource(10))
	const n = 8
	slug := func(i int) string { return fmt.Sprintf("n%d", i) }
	for i := range n {
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: slug(i), Slug: slug(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.1", IdentityID: slug(0)}); err != nil {
		t.Fatal(err)
	}
	// ends: the identities and both devices
	end := func() string {
		i := rng.Intn(n + 2)
		if i < n {
			return slug(i)
		}
		return []string{"usb:3-3.1", "usb:3-3.2"}[i-n]
	}
	ports := []string{"", "MIDI OUT", "midi out", "In 1"}
	types := []string{"controls", "part_of", "cable"}
	var ids []string
	for step := range 400 {
		var what string
		var err error
		switch op := rng.Intn(10); {
		case op < 4:
			c := graph.RelationCreate{From: end(), FromPort: ports[rng.Intn(len(ports))], Type: types[rng.Intn(len(types))],
				To: end(), ToPort: ports[rng.Intn(len(ports))], Attrs: map[string]string{"kind": "usb"}}
			what = fmt.Sprintf("relate %+v", c)
			var ch *graph.RelationChange
			if ch, err = db.Relate(ctx, c); err == nil {
				ids = append(ids, ch.Relation.ID)
			}
		case op < 5 && len(ids) > 0:
			id := ids[rng.Intn(len(ids))]
			p := ports[rng.Intn(len(ports))]
			what = "update " + id + " to_port " + p
			_, err = db.UpdateRelation(ctx, id, graph.RelationUpdate{ToPort: &p})
		case op < 6 && len(ids) > 0:
			id := ids[rng.Intn(len(ids))]
			what = "unrelate " + id
			_, err = db.Unrelate(ctx, graph.RelationRemove{ID: id})
		case op < 7:
			what = "delete " + slug(rng.Intn(n))
			err = db.DeleteIdentity(ctx, what[len("delete "):])
		case op < 9:
			what = "restore " + slug(rng.Intn(n))
			_, err = db.RestoreIdentity(ctx, what[len("restore "):])
		default:
			a, b := slug(rng.Intn(n)), slug(rng.Intn(n))
			what = "merge " + a + " into " + b
			_, err = db.MergeIdentities(ctx, a, b)
		}
		if err != nil && graph.ErrorCode(err) == graph.EINTERNAL {
			t.Fatalf("step %d %s: %v", step, what, err)
		}
		if p, err := db.CheckRelations(context.Background()); err != nil || len(p) > 0 {
			t.Fatalf("step %d, after %s: %q %v", step, what, p, err)
		}
	}
	if _, total, _, err := db.FindRelations(ctx, graph.RelationFilter{}); err != nil || total == 0 {
		t.Fatalf("the mix left %d relations (%v); it should exercise some", total, err)
	}
	verifyDB(t, db)
}
