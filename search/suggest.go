package search

import (
	"bytes"
	"context"
	"sort"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// idKeys is what SuggestID compares a typed id with, kept beside each index entry: the
// id's local part (an identity's slug, a device's key) and a device's current ref, each
// ASCII-lowercased and as a character mask (charMask) that rules most keys out at once.
type idKeys struct {
	key, keyLower string
	ref, refLower string
	keyMask       uint64
	refMask       uint64
}

func identityKeys(id *graph.Identity) idKeys {
	_, slug, _ := graph.SplitID(id.ID)
	return idKeys{key: slug, keyLower: lowerASCII(slug), keyMask: charMask(slug)}
}

func deviceKeys(d *graph.Device) idKeys {
	_, key, _ := graph.SplitID(d.ID)
	return idKeys{key: key, keyLower: lowerASCII(key), keyMask: charMask(key),
		ref: d.Ref, refLower: lowerASCII(d.Ref), refMask: charMask(d.Ref)}
}

// lowerASCII lowercases A-Z only (what the store's key comparison did), sharing s when
// it has none.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// syncKey marks the context of the index's own reads: a miss among them (a node deleted
// since the last sync) asks for a suggestion nobody will read, and answering it would
// need the sync it is part of.
type syncKey struct{}

// suggestAll is how many keys of one kind are small enough to measure every one by edit
// distance; above it only the keys next to where the typed id would sort are measured
// (the substring and token checks always cover the whole index).
const suggestAll = 2000

// seps are what "jdxi" may leave out of "roland-jd-xi".
const seps = "-_:./ "

// SuggestID answers a store's "did you mean" for identities and devices from the index
// (see graph.Suggester), by the rules the store used when it scanned its keys: a key
// within edit distance 1 of local (a shared prefix counting one less), else the
// shortest key containing local (case and separators ignored, at least 3 bytes), else
// a key within about half local's length, else the shortest key holding each of local's
// tokens. Identities are named by id; devices by id or, matched on their current ref,
// by that ref. Other kinds are left to the caller (ok false).
func (f *Finder) SuggestID(ctx context.Context, k graph.Kind, local string) (string, bool) {
	if k != graph.KindIdentity && k != graph.KindDevice {
		return "", false
	}
	if ctx.Value(syncKey{}) == f {
		return "", true
	}
	if err := f.sync(ctx); err != nil {
		return "", false
	}
	f.idx.RLock()
	defer f.idx.RUnlock()
	return f.suggestLocked(k, local), true
}

// keyRef is one candidate key: bucket 0 is the id's local part, bucket 1 a device's ref.
type keyRef struct {
	bucket int
	key    string
}

func (a keyRef) less(b keyRef) bool {
	if len(a.key) != len(b.key) {
		return len(a.key) < len(b.key)
	}
	if a.bucket != b.bucket {
		return a.bucket < b.bucket
	}
	return a.key < b.key
}

func (f *Finder) suggestLocked(k graph.Kind, local string) string {
	kind := string(k)
	name := func(c keyRef) string {
		if c.bucket == 1 {
			return c.key // a ref is itself a valid way to name a device
		}
		return kind + ":" + c.key
	}
	buckets := 1
	if k == graph.KindDevice {
		buckets = 2
	}

	lower := strings.ToLower(local)
	var tokens []string
	for _, t := range strings.FieldsFunc(lower, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
		if len(t) >= 2 {
			tokens = append(tokens, t)
		}
	}
	if len(tokens) < 2 {
		tokens = nil // one token is the whole text: the substring check covers it
	}
	lowerBare := bareOf(nil, lower)
	needMask := charMask(string(lowerBare)) // every key containing the text, bare or by tokens, has these

	var sub, tok keyRef
	hasSub, hasTok := false, false
	var buf []byte
	contain := func(c keyRef, low string) {
		if !hasSub || c.less(sub) {
			if len(lower) >= 3 && strings.Contains(low, lower) || len(lowerBare) >= 3 && containsBare(&buf, low, lowerBare) {
				sub, hasSub = c, true
				return
			}
		}
		// Tokens count only when no key contains the whole text.
		if tokens == nil || hasSub || hasTok && !c.less(tok) {
			return
		}
		for _, t := range tokens {
			if !strings.Contains(low, t) {
				return
			}
		}
		tok, hasTok = c, true
	}
	closerAfter := func(x, y string) bool { return x < y }
	closerBefore := func(x, y string) bool { return x > y }

	// One pass: the substring and token candidates, and per bucket either every key
	// (few) or the five keys either side of where local would sort (many).
	var all [2][]string
	var count [2]int
	var after, before [2][]string // nearest first
	for i := range f.ent {
		if f.ent[i].kind != kind {
			continue
		}
		ks := &f.keys[i]
		for b := 0; b < buckets; b++ {
			key, low, mask := ks.key, ks.keyLower, ks.keyMask
			if b == 1 {
				key, low, mask = ks.ref, ks.refLower, ks.refMask
				if key == "" {
					continue
				}
			}
			count[b]++
			if count[b] <= suggestAll {
				all[b] = append(all[b], key)
			}
			if key >= local {
				after[b] = nearest(after[b], key, closerAfter)
			} else {
				before[b] = nearest(before[b], key, closerBefore)
			}
			if mask&needMask == needMask {
				contain(keyRef{b, key}, low)
			}
		}
	}

	// Edit distance, in the order the store measured keys (the neighbours after, those
	// before, then every key of a small bucket): at equal distance the first one wins.
	best, bestD := "", 1<<30
	consider := func(b int, key string) {
		d := graph.EditDistance(local, key, bestD)
		if strings.HasPrefix(key, local) || strings.HasPrefix(local, key) {
			d-- // a shared prefix is a strong hint
		}
		if d < bestD {
			best, bestD = name(keyRef{b, key}), d
		}
	}
	for b := 0; b < buckets; b++ {
		for _, key := range after[b] {
			consider(b, key)
		}
		for _, key := range before[b] {
			consider(b, key)
		}
		if count[b] <= suggestAll {
			sort.Strings(all[b])
			for _, key := range all[b] {
				consider(b, key)
			}
		}
	}
	switch {
	case bestD <= 1 && best != "":
		return best // a typo or a prefix
	case hasSub:
		return name(sub)
	case bestD <= len(local)/2+2 && best != "":
		return best
	case hasTok:
		return name(tok)
	}
	return ""
}

// nearest keeps the five keys closest to the typed id on one side, nearest first.
func nearest(list []string, key string, closer func(x, y string) bool) []string {
	const n = 5
	if len(list) == n && !closer(key, list[n-1]) {
		return list
	}
	i := sort.Search(len(list), func(j int) bool { return closer(key, list[j]) })
	if len(list) < n {
		list = append(list, "")
	}
	copy(list[i+1:], list[i:len(list)-1])
	list[i] = key
	return list
}

// containsBare reports whether low without separators contains bare, reusing buf.
func containsBare(buf *[]byte, low string, bare []byte) bool {
	*buf = bareOf((*buf)[:0], low)
	return bytes.Contains(*buf, bare)
}

func bareOf(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(seps, rune(s[i])) {
			dst = append(dst, s[i])
		}
	}
	return dst
}
