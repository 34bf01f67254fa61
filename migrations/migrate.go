package migrations

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/devgraph/devgraph/graph"

	bolt "go.etcd.io/bbolt"
)

// Step carries a file from version From to From+1 inside one transaction.
type Step struct {
	From  int
	Name  string
	Apply func(tx *bolt.Tx, o Options) error
}

// Steps are every migration, in order. Steps[i].From == i+1.
var Steps = []Step{
	{From: 1, Name: "store changelog events in the compact binary record with deflated bodies", Apply: v1ToV2},
	{From: 2, Name: "add the declared relation buckets (records, indexes both ways, types, tuples, counts)", Apply: v2ToV3},
	{From: 3, Name: "give every device and robot record the host it belongs to, and fix the host name in the meta", Apply: v3ToV4},
}

// StatusReport describes a file's schema state.
type StatusReport struct {
	Path    string   `json:"path"`
	Version int      `json:"version"` // 0 for a new, empty file
	Current int      `json:"current"` // what this build writes
	Pending []string `json:"pending,omitempty"`
	Newer   bool     `json:"newer,omitempty"` // written by a newer devgraph
}

// Options for Prepare.
type Options struct {
	Now      func() time.Time
	NoBackup bool // skip the backup copy before migrating (tests, scratch files)
	ReadOnly bool // refuse to migrate; only check
	// Version stamps a brand-new file with this version instead of CurrentVersion
	// (used only to write old-format fixtures).
	Version int
	// Host is this machine's host name (graph.HostSlug): a new file and the version 3→4
	// step record it in the meta (KeyHost) and the step gives every device and robot
	// record it. A file that holds another host name is refused unless ReadOnly; "" takes
	// the file's (a file without one is then left without one).
	Host string
	// Fleet marks a fleet's replica: the cluster holds the host-name claims (with the
	// machine id), so the file's meta holds no host and claims none.
	Fleet bool
}

// Prepare makes db ready for this build: a new, empty file gets every bucket and the
// current version; an older file is backed up beside path and migrated; a newer file or one
// that is not a devgraph database is refused with EINVALID. It returns the version the
// file is at afterwards and the backup path, if one was written.
func Prepare(db *bolt.DB, path string, o Options) (version int, backup string, err error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	version, empty, err := readVersion(db, path)
	if err != nil {
		return 0, "", err
	}
	if !empty && !o.ReadOnly && !o.Fleet {
		if err := checkHost(db, path, o.Host); err != nil {
			return version, "", err
		}
	}
	if empty {
		if o.ReadOnly {
			return 0, "", graph.Errorf(graph.EINVALID, "database %s is empty and was opened read-only; open it read-write once to create it", path)
		}
		v := CurrentVersion
		if o.Version != 0 {
			v = o.Version
		}
		host := o.Host
		if o.Fleet {
			host = ""
		}
		err := db.Update(func(tx *bolt.Tx) error { return initFile(tx, v, o.Now(), host) })
		if err != nil {
			return 0, "", fmt.Errorf("initialise %s: %w", path, err)
		}
		return v, "", nil
	}
	if version > CurrentVersion {
		return version, "", graph.Errorf(graph.EINVALID, "database %s is at schema version %d, newer than this devgraph understands (%d); upgrade devgraph or open a backup", path, version, CurrentVersion)
	}
	if version == CurrentVersion {
		return version, "", claimHost(db, o)
	}
	if o.ReadOnly {
		return version, "", graph.Errorf(graph.EINVALID, "database %s is at schema version %d and needs migrating to %d; open it read-write (devgraph migrate)", path, version, CurrentVersion)
	}
	if version < 4 && o.Host == "" {
		return version, "", graph.Errorf(graph.EINVALID, "database %s is at schema version %d and its devices need a host name to migrate to %d; pass --host-name", path, version, CurrentVersion)
	}
	if !o.NoBackup {
		backup = fmt.Sprintf("%s.bak-v%d-%s", path, version, o.Now().UTC().Format("20060102T150405Z"))
		err := db.View(func(tx *bolt.Tx) error { return tx.CopyFile(backup, 0o600) })
		if err != nil {
			return version, "", fmt.Errorf("back up %s before migrating: %w", path, err)
		}
	}
	for _, s := range Steps {
		if s.From != version {
			continue
		}
		err := db.Update(func(tx *bolt.Tx) error {
			if err := s.Apply(tx, o); err != nil {
				return err
			}
			return tx.Bucket(BucketMeta).Put(KeyVersion, []byte(strconv.Itoa(s.From+1)))
		})
		if err != nil {
			return version, backup, fmt.Errorf("migrate %s from version %d (%s): %w; the file is unchanged at version %d, backup at %s", path, s.From, s.Name, err, version, backup)
		}
		version = s.From + 1
	}
	return version, backup, nil
}

// readVersion reports the file's version, or empty for a file with no buckets at all.
func readVersion(db *bolt.DB, path string) (version int, empty bool, err error) {
	err = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(BucketMeta)
		if meta == nil {
			n := 0
			tx.ForEach(func([]byte, *bolt.Bucket) error { n++; return nil })
			if n == 0 {
				empty = true
				return nil
			}
			return notDevgraph(path)
		}
		if string(meta.Get(KeyFormat)) != FormatName {
			return notDevgraph(path)
		}
		v, err := strconv.Atoi(string(meta.Get(KeyVersion)))
		if err != nil || v < 1 {
			return graph.Errorf(graph.EINVALID, "database %s has a damaged schema version %q: restore a backup; devgraph backup makes one", path, meta.Get(KeyVersion))
		}
		version = v
		return nil
	})
	return version, empty, err
}

func notDevgraph(path string) error {
	return graph.Errorf(graph.EINVALID, "%s is a bbolt file but not a devgraph database: point --db at a devgraph database or a new path, or restore a backup; devgraph backup makes one", path)
}

func initFile(tx *bolt.Tx, version int, now time.Time, host string) error {
	for _, name := range AllBuckets {
		if BucketSince[string(name)] > version {
			continue // a fixture at an old version has that version's buckets only
		}
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	meta := tx.Bucket(BucketMeta)
	meta.Put(KeyFormat, []byte(FormatName))
	meta.Put(KeyCreated, []byte(now.UTC().Format(time.RFC3339Nano)))
	if host != "" && version >= 4 { // hosts came with version 4
		meta.Put(KeyHost, []byte(host))
	}
	return meta.Put(KeyVersion, []byte(strconv.Itoa(version)))
}

// HostOf returns the host name fixed in the file's meta ("" when none is).
func HostOf(db *bolt.DB) string {
	var host string
	db.View(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(BucketMeta); meta != nil {
			host = string(meta.Get(KeyHost))
		}
		return nil
	})
	return host
}

// checkHost refuses to write a file whose meta holds a host name other than host: its
// devices are another machine's.
func checkHost(db *bolt.DB, path, host string) error {
	held := HostOf(db)
	if host == "" || held == "" || held == host {
		return nil
	}
	return graph.FieldErrorf(graph.EINVALID, "host_name", "database %s belongs to host %q (fixed when it was first written), not %q: pass --host-name %s (or set DEVGRAPH_HOST_NAME=%s) to use it on this machine, or point --db at another file",
		path, held, host, held, held)
}

// claimHost fixes o.Host in the meta of a current file that holds none yet.
func claimHost(db *bolt.DB, o Options) error {
	if o.Host == "" || o.ReadOnly || o.Fleet || HostOf(db) != "" {
		return nil
	}
	return db.Update(func(tx *bolt.Tx) error { return tx.Bucket(BucketMeta).Put(KeyHost, []byte(o.Host)) })
}

// Status opens path read-only and reports its schema state without changing it.
func Status(path string) (*StatusReport, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, graph.Errorf(graph.ENOTFOUND, "database %s does not exist; any devgraph command that writes creates it", path)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return nil, graph.Errorf(graph.EINVALID, "cannot read %s as a devgraph database: %v", path, err)
	}
	defer db.Close()
	return StatusOf(db, path)
}

// StatusOf reports the schema state of an open database.
func StatusOf(db *bolt.DB, path string) (*StatusReport, error) {
	v, empty, err := readVersion(db, path)
	if err != nil {
		return nil, err
	}
	r := &StatusReport{Path: path, Version: v, Current: CurrentVersion}
	if empty {
		r.Pending = append(r.Pending, fmt.Sprintf("create at version %d", CurrentVersion))
		return r, nil
	}
	r.Newer = v > CurrentVersion
	r.Pending = PendingSteps(v)
	return r, nil
}

// PendingSteps names the steps that carry records at version v to CurrentVersion, in
// order, as "3→4: what it does" (none when v is current or newer).
func PendingSteps(v int) []string {
	var out []string
	for _, s := range Steps {
		if s.From >= v {
			out = append(out, fmt.Sprintf("%d→%d: %s", s.From, s.From+1, s.Name))
		}
	}
	return out
}

// v1ToV2 re-encodes every changelog event from JSON to the binary record. The hashes cover
// the canonical encoding, not the storage one, so the chain is unchanged.
func v1ToV2(tx *bolt.Tx, _ Options) error {
	b := tx.Bucket(BucketEvents)
	if b == nil {
		return fmt.Errorf("events bucket missing")
	}
	b.FillPercent = 1
	// bbolt cursors may go astray when the bucket changes under them: re-encode in chunks,
	// seeking again after each.
	var from []byte
	for {
		type kv struct{ k, v []byte }
		var chunk []kv
		c := b.Cursor()
		k, v := c.First()
		if from != nil {
			k, v = c.Seek(from)
		}
		for ; k != nil && len(chunk) < 1024; k, v = c.Next() {
			chunk = append(chunk, kv{append([]byte(nil), k...), v})
		}
		if len(chunk) == 0 {
			return nil
		}
		next := append([]byte(nil), k...)
		var enc [][]byte
		for _, p := range chunk {
			e, err := DecodeEventV1(p.v)
			if err != nil {
				return fmt.Errorf("event %d: decode v1: %w", ReadU64(p.k), err)
			}
			nb, err := EncodeEvent(e)
			if err != nil {
				return err
			}
			enc = append(enc, nb)
		}
		for i, p := range chunk {
			if err := b.Put(p.k, enc[i]); err != nil {
				return err
			}
		}
		if k == nil {
			return nil
		}
		from = next
	}
}

// v2ToV3 adds the buckets of declared relations. A version-2 file has no relations, so
// they start empty (the counters read 0 when absent).
func v2ToV3(tx *bolt.Tx, _ Options) error {
	for _, name := range AllBuckets {
		if BucketSince[string(name)] == 3 {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
	}
	return nil
}

// v3ToV4 gives every device record and every robot record the host it belongs to: in a
// version-3 file every device was this machine's, so each gets o.Host, and the meta fixes
// it. Ids, keys and refs stay as they are (a bbolt file never qualifies them). Records are
// rewritten field by field, so nothing this build does not know is lost.
func v3ToV4(tx *bolt.Tx, o Options) error {
	if o.Host == "" {
		return fmt.Errorf("no host name to give the devices (pass --host-name)")
	}
	for _, name := range [][]byte{BucketDevices, BucketRobots} {
		b := tx.Bucket(name)
		if b == nil {
			return fmt.Errorf("%s bucket missing", name)
		}
		type kv struct{ k, v []byte }
		var recs []kv
		err := b.ForEach(func(k, v []byte) error {
			var rec map[string]json.RawMessage
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("%s record %q: %w", name, k, err)
			}
			if _, ok := rec["host"]; ok {
				return nil
			}
			rec["host"], _ = json.Marshal(o.Host)
			nv, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			recs = append(recs, kv{append([]byte(nil), k...), nv})
			return nil
		})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := b.Put(r.k, r.v); err != nil {
				return err
			}
		}
	}
	if o.Fleet {
		return nil
	}
	return tx.Bucket(BucketMeta).Put(KeyHost, []byte(o.Host))
}
