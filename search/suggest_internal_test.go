package search

import "testing"

// barePairMask is bigramMask over the bare lowercased form, without building it.
func TestBarePairMask(t *testing.T) {
	for _, key := range []string{"", "a", "roland-jd-xi", "0582:01a9:3-3.2", "USB:3-3.2", "alsa:card:PCH", "A_b.C d/e"} {
		_, bare := forms(key)
		if got, want := barePairMask(key), bigramMask(bare); got != want {
			t.Errorf("barePairMask(%q)=%x, want %x", key, got, want)
		}
	}
}
