package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

// ResolveID: see graph.Store.
func (db *DB) ResolveID(ctx context.Context, text string, kinds ...graph.Kind) (string, error) {
	var out string
	err := db.view(ctx, func(tx *bolt.Tx) (err error) {
		out, err = db.resolve(tx, text, kinds...)
		return err
	})
	return out, err
}

func allows(kinds []graph.Kind, k graph.Kind) bool {
	if len(kinds) == 0 {
		return true
	}
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

// resolve expands a full id, bare slug, device key or device ref into the full id of an
// existing node of one of kinds (any when none), or ENOTFOUND with the closest suggestion.
// Every interface resolves through it, so each takes the same forms: any letter case
// ("JDXI", "USB:3-3.2"), a bare robot name ("scout" for robot:scout), and any ref a device
// answers to besides its current one (resolveRef). A ref several devices answer to is
// refused (EINVALID) with the devices named.
func (db *DB) resolve(tx *bolt.Tx, text string, kinds ...graph.Kind) (string, error) {
	if !db.opts.Fleet {
		return resolveIn(tx, text, kinds...)
	}
	// On a fleet a bare device ref, key or robot name is the caller's own host's first
	// ("usb:3-3.2" is studio-a/usb:3-3.2 on studio-a); every form that resolves without
	// the host still does.
	t := strings.TrimSpace(text)
	if q := db.onOwnHost(t); q != "" && allows(kinds, graph.KindDevice) {
		if full, err := resolveIn(tx, q, graph.KindDevice); err == nil {
			return full, nil
		} else if graph.ErrorCode(err) != graph.ENOTFOUND {
			return "", err
		}
	}
	full, err := resolveIn(tx, text, kinds...)
	if err != nil && graph.ErrorCode(err) == graph.ENOTFOUND && allows(kinds, graph.KindDevice) && t != "" && !strings.ContainsAny(t, ":/") {
		// A bare robot name: "scout" is studio-a/robot:scout on studio-a.
		if key, rerr := resolveRef(tx, graph.QualifyHost(db.host, "robot:"+t)); rerr == nil && key != "" {
			return graph.DeviceID(key), nil
		}
	}
	return full, err
}

// onOwnHost is t qualified with this host when t is a device id, key or ref without a
// host ("device:path:…", "usb:3-3.2"); "" otherwise.
func (db *DB) onOwnHost(t string) string {
	if k, local, ok := splitKindFold(t); ok {
		if k != graph.KindDevice {
			return ""
		}
		if h, _ := graph.SplitHost(local); h != "" {
			return ""
		}
		return graph.DeviceID(graph.QualifyHost(db.host, local))
	}
	if ref, ok := refFold(t); ok {
		if h, _ := graph.SplitHost(ref); h == "" {
			return graph.QualifyHost(db.host, ref)
		}
	}
	return ""
}

// resolveIn is resolve without a host: the forms a bbolt file takes.
func resolveIn(tx *bolt.Tx, text string, kinds ...graph.Kind) (string, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return "", graph.FieldErrorf(graph.EINVALID, "id", "no id given; want e.g. identity:roland-jd-xi, a bare slug, or a device ref such as usb:3-3.2")
	}
	if err := graph.ValidateText("id", t, 1, 1024); err != nil {
		return "", err
	}
	if k, local, ok := splitKindFold(t); ok {
		if !allows(kinds, k) {
			return "", graph.FieldErrorf(graph.EINVALID, "id", "%s is %s id; want %s", t, article(string(k)), kindWords(kinds))
		}
		if full := existsFold(tx, k, local); full != "" {
			return full, nil
		}
		return "", notFound(t, k, local)
	}
	if ref, ok := refFold(t); ok && allows(kinds, graph.KindDevice) {
		key, err := resolveRef(tx, ref)
		if err != nil {
			return "", err
		}
		if key != "" {
			return graph.DeviceID(key), nil
		}
		if full := existsFold(tx, graph.KindDevice, t); full != "" { // robot:<serial> keys look like refs
			return full, nil
		}
		return "", notFound(t, graph.KindDevice, t)
	}
	for _, k := range []graph.Kind{graph.KindIdentity, graph.KindDevice, graph.KindNote} {
		if !allows(kinds, k) {
			continue
		}
		if full := existsFold(tx, k, t); full != "" {
			return full, nil
		}
	}
	if allows(kinds, graph.KindDevice) && !strings.ContainsRune(t, ':') {
		// A bare robot name: "scout" is robot:scout.
		key, err := resolveRef(tx, "robot:"+t)
		if err != nil {
			return "", err
		}
		if key != "" {
			return graph.DeviceID(key), nil
		}
	}
	k := graph.KindIdentity
	if !allows(kinds, k) && len(kinds) > 0 {
		k = kinds[0]
	}
	return "", notFound(t, k, t)
}

// splitKindFold is graph.SplitID with the kind prefix in any letter case.
func splitKindFold(t string) (graph.Kind, string, bool) {
	i := strings.IndexByte(t, ':')
	if i < 0 {
		return "", t, false
	}
	k, local, ok := graph.SplitID(strings.ToLower(t[:i]) + t[i:])
	return k, local, ok
}

// refFold reports whether t is a device ref, its source in any letter case, and returns it
// with the source lowercased ("USB:3-3.2" → "usb:3-3.2").
func refFold(t string) (string, bool) {
	host, t := graph.SplitHost(t)
	i := strings.IndexByte(t, ':')
	if i <= 0 {
		return "", false
	}
	ref := strings.ToLower(t[:i]) + t[i:]
	return graph.QualifyHost(host, ref), graph.IsRef(ref)
}

// existsFold returns the full id of the node of kind k whose local id is local, or equals
// it but for letter case; "" when there is none. Slugs, note, tag and relation ids are
// lowercase, so their lowercase form is looked up; a device key (it may carry a serial in
// capitals) is looked up as typed and else found by a walk of the devices.
func existsFold(tx *bolt.Tx, k graph.Kind, local string) string {
	full := func(l string) string {
		if k == graph.KindIdentity {
			return graph.IdentityID(l)
		}
		return string(k) + ":" + l
	}
	if exists(tx, k, local) {
		return full(local)
	}
	if k != graph.KindDevice {
		if low := strings.ToLower(local); low != local && exists(tx, k, low) {
			return full(low)
		}
		return ""
	}
	c := tx.Bucket(m.BucketDevices).Cursor()
	for key, _ := c.First(); key != nil; key, _ = c.Next() {
		if len(key) == len(local) && strings.EqualFold(string(key), local) {
			return full(string(key))
		}
	}
	return ""
}

// resolveRef returns the key of the one device that answers to ref: the device the refs
// index holds for it (its current or a former ref, as typed), else every device whose
// current or former ref, or the ref a source would give it on its own (answersTo), equals
// ref — as typed if any does, else in any letter case. "" when none answers; EINVALID
// naming the devices when several do. The walk runs only when the index misses, and reads
// each device record once.
func resolveRef(tx *bolt.Tx, ref string) (string, error) {
	if key := tx.Bucket(m.BucketRefs).Get([]byte(ref)); key != nil {
		return string(key), nil
	}
	var exact, folded []*graph.Device
	c := tx.Bucket(m.BucketDevices).Cursor()
	for key, v := c.First(); key != nil; key, v = c.Next() {
		var d graph.Device
		if err := json.Unmarshal(v, &d); err != nil {
			continue // a damaged record: doctor reports it; it answers to nothing here
		}
		if d.Key == "" {
			d.Key = string(key)
		}
		match, fold := false, false
		for _, r := range answersTo(&d) {
			if r == ref {
				match = true
				break
			}
			if strings.EqualFold(r, ref) {
				fold = true
			}
		}
		switch {
		case match:
			exact = append(exact, &d)
		case fold:
			folded = append(folded, &d)
		}
	}
	found := exact
	if len(found) == 0 {
		found = folded
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0].Key, nil
	}
	names := make([]string, 0, len(found))
	for i, d := range found {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(found)-i))
			break
		}
		names = append(names, fmt.Sprintf("%s (%s, %s)", d.Ref, d.Name, d.ID))
	}
	return "", graph.FieldErrorf(graph.EINVALID, "id", "%s is ambiguous: %d devices answer to it: %s; name one by its ref or id", ref, len(found), strings.Join(names, ", "))
}

// answersTo lists the refs a device answers to: its current ref, its former refs, and the
// ref each source that sees it would give it alone — alsa:card:<card id> (the card's own
// id, so twins' nanoKONTROL2 and nanoKONTROL2_1 stay apart), alsa:seq:<client> and
// pipewire:midi:<client>, pipewire:<device.name>.
func answersTo(d *graph.Device) []string {
	out := append([]string{d.Ref}, d.Aliases...)
	// On a fleet the refs a source would give carry the device's host as its ref does.
	host, _ := graph.SplitHost(d.Ref)
	for _, r := range sourceRefs(d) {
		out = append(out, graph.QualifyHost(host, r))
	}
	return out
}

// sourceRefs lists the refs each source that sees d would give it alone.
func sourceRefs(d *graph.Device) []string {
	var out []string
	cards := false
	if ids := d.Attrs["alsa_id"]; ids != "" {
		for _, id := range strings.Split(ids, ",") {
			if id = strings.TrimSpace(id); id != "" {
				out = append(out, "alsa:card:"+id)
				cards = true
			}
		}
	}
	for _, fp := range d.Fingerprints {
		switch fp.Kind {
		case graph.FPALSACardID:
			if !cards {
				out = append(out, "alsa:card:"+fp.Value)
			}
		case graph.FPMIDIClient:
			out = append(out, "alsa:seq:"+fp.Value, "pipewire:midi:"+fp.Value)
		case graph.FPPipeWireDevice:
			out = append(out, "pipewire:"+fp.Value)
		}
	}
	return out
}

func kindWords(kinds []graph.Kind) string {
	if len(kinds) == 0 {
		return "any node"
	}
	ss := make([]string, len(kinds))
	for i, k := range kinds {
		ss[i] = article(string(k))
	}
	return strings.Join(ss, " or ")
}

func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}

func exists(tx *bolt.Tx, k graph.Kind, local string) bool {
	switch k {
	case graph.KindIdentity:
		return tx.Bucket(m.BucketIdentities).Get([]byte(local)) != nil
	case graph.KindDevice:
		return tx.Bucket(m.BucketDevices).Get([]byte(local)) != nil
	case graph.KindNote:
		return tx.Bucket(m.BucketNotes).Get([]byte(local)) != nil
	case graph.KindTag:
		return tx.Bucket(m.BucketTagCounts).Get([]byte(local)) != nil
	case graph.KindRelation:
		b := tx.Bucket(m.BucketRelations)
		return b != nil && b.Get([]byte(local)) != nil
	}
	return false
}

// unknownID is the ENOTFOUND of an id that names nothing. Its "did you mean" is looked up
// when the read or write that failed has ended (DB.finish), not inside its transaction:
// the suggester reads through the store itself, and a miss the caller handles (an
// optional filter, an import skipping a note) then costs no search at all.
type unknownID struct {
	err   *graph.Error // what callers see; finish completes its message
	text  string       // as typed
	kind  graph.Kind
	local string // text without its kind prefix
	done  bool   // the message is complete
}

func (e *unknownID) Error() string { return e.err.Error() }
func (e *unknownID) Unwrap() error { return e.err }

func notFound(text string, k graph.Kind, local string) error {
	e := graph.FieldErrorf(graph.ENOTFOUND, "id", "%s", unknownMessage(text, k, ""))
	switch k {
	case graph.KindDevice:
		e.Next(graph.ListStep(graph.ListDevices, ""))
	case graph.KindIdentity:
		e.Next(graph.ListStep(graph.ListIdentities, ""))
	case graph.KindRelation:
		e.Next(graph.ListStep(graph.ListRelations, ""))
	case graph.KindTag:
		e.Next(graph.ListStep(graph.ListTags, ""))
	}
	return &unknownID{err: e, text: text, kind: k, local: local}
}

func unknownMessage(text string, k graph.Kind, suggestion string) string {
	word := string(k)
	if k == graph.KindRelation {
		word = "relation"
	}
	msg := fmt.Sprintf("unknown %s %q", word, text)
	if suggestion != "" {
		msg += fmt.Sprintf("; did you mean %s?", suggestion)
	}
	return msg
}

// SetSuggester makes s name the closest node in the message of an unknown id, in place of
// the store's own bounded look at its keys (cmd hands it the name index, so a miss costs
// no scan of the file). nil restores the store's own. Safe to call while the store serves.
func (db *DB) SetSuggester(s graph.Suggester) {
	if s == nil {
		db.suggester.Store(nil)
		return
	}
	db.suggester.Store(&s)
}

// finish completes the message of an unknown id in err with its suggestion, asking the
// suggester and else looking at the store's keys in a read of its own. It is called once
// the transaction that failed has ended; other errors pass unchanged.
func (db *DB) finish(ctx context.Context, err error) error {
	var u *unknownID
	if err == nil || !errors.As(err, &u) {
		return err
	}
	if !u.done {
		u.done = true
		suggestion, ok := "", false
		if s := db.suggester.Load(); s != nil {
			suggestion, ok = (*s).SuggestID(ctx, u.kind, u.local)
		}
		if !ok {
			_ = db.view(ctx, func(tx *bolt.Tx) error {
				suggestion = suggest(tx, u.kind, u.local)
				return nil
			})
		}
		u.err.Message = unknownMessage(u.text, u.kind, suggestion)
	}
	if err == error(u) {
		return u.err // callers see the *graph.Error itself, as before
	}
	return err
}

// suggestBudget bounds how many keys of each bucket the store's own suggestion looks at:
// the ten either side of where the typed id would sort, and the first suggestBudget. It
// serves a store opened alone (the CLI on the file), where every bucket of a small
// graph fits the budget; a server answers from its name index (SetSuggester), which
// holds every name in memory, so a miss never walks the file's keys.
const suggestBudget = 2000

// suggest returns the closest existing id of kind k to local: a key within a small edit
// distance (neighbours of where local would sort, and the first suggestBudget keys), else
// the shortest key containing local (at least 3 bytes, separators ignored), else the
// shortest key containing each of local's tokens (split at '-', '_', ':', '.', ' ', '/'),
// among the first suggestBudget keys of each bucket. search.Finder.SuggestID keeps the
// same rules over its index.
func suggest(tx *bolt.Tx, k graph.Kind, local string) string {
	var buckets [][]byte
	prefix := string(k) + ":"
	switch k {
	case graph.KindIdentity:
		buckets = [][]byte{m.BucketIdentities}
	case graph.KindDevice:
		buckets = [][]byte{m.BucketDevices, m.BucketRefs}
	case graph.KindNote:
		buckets = [][]byte{m.BucketNotes}
	case graph.KindRelation:
		buckets = [][]byte{m.BucketRelations}
	default:
		return ""
	}
	name := func(b []byte, key []byte) string {
		if bytes.Equal(b, m.BucketRefs) {
			return string(key) // a ref is itself a valid way to name a device
		}
		return prefix + string(key)
	}
	best, bestD := "", 1<<30
	consider := func(b []byte, key []byte) {
		cand := string(key)
		d := graph.EditDistance(local, cand, bestD)
		if strings.HasPrefix(cand, local) || strings.HasPrefix(local, cand) {
			d-- // a shared prefix is a strong hint
		}
		if d < bestD {
			best, bestD = name(b, key), d
		}
	}
	lower := []byte(strings.ToLower(local))
	var tokens [][]byte
	for _, t := range strings.FieldsFunc(string(lower), func(r rune) bool { return strings.ContainsRune("-_:./ ", r) }) {
		if len(t) >= 2 {
			tokens = append(tokens, []byte(t))
		}
	}
	if len(tokens) < 2 {
		tokens = nil // one token is the whole text: the substring check covers it
	}
	// Separators typed or not: "jdxi" names roland-jd-xi as well as "jd-xi" does.
	bareOf := func(dst, b []byte) []byte {
		dst = dst[:0]
		for _, c := range b {
			if !strings.ContainsRune("-_:./ ", rune(c)) {
				dst = append(dst, c)
			}
		}
		return dst
	}
	lowerBare := bareOf(nil, lower)
	sub, subLen := "", 1<<30
	tok, tokLen := "", 1<<30
	var low, bare []byte
	contain := func(b []byte, key []byte) {
		if len(key) >= subLen && len(key) >= tokLen {
			return
		}
		low = append(low[:0], key...)
		for i, c := range low {
			if 'A' <= c && c <= 'Z' {
				low[i] = c + 'a' - 'A'
			}
		}
		if len(lower) >= 3 && len(key) < subLen && bytes.Contains(low, lower) {
			sub, subLen = name(b, key), len(key)
			return
		}
		if len(lowerBare) >= 3 && len(key) < subLen {
			if bare = bareOf(bare, low); bytes.Contains(bare, lowerBare) {
				sub, subLen = name(b, key), len(key)
				return
			}
		}
		if tokens == nil || len(key) >= tokLen {
			return
		}
		for _, t := range tokens {
			if !bytes.Contains(low, t) {
				return
			}
		}
		tok, tokLen = name(b, key), len(key)
	}
	for _, bn := range buckets {
		bk := tx.Bucket(bn)
		c := bk.Cursor()
		// neighbours of where local would sort
		key, _ := c.Seek([]byte(local))
		for i := 0; i < 5 && key != nil; i++ {
			consider(bn, key)
			key, _ = c.Next()
		}
		c.Seek([]byte(local))
		key, _ = c.Prev()
		for i := 0; i < 5 && key != nil; i++ {
			consider(bn, key)
			key, _ = c.Prev()
		}
		n := 0
		for key, _ := c.First(); key != nil && n < suggestBudget; key, _ = c.Next() {
			consider(bn, key)
			contain(bn, key)
			n++
		}
	}
	switch {
	case bestD <= 1 && best != "":
		return best // a typo or a prefix
	case sub != "":
		return sub
	case bestD <= len(local)/2+2 && best != "":
		return best
	case tok != "":
		return tok
	}
	return ""
}
