package graph

import (
	"context"
	"regexp"
	"strings"
)

var tagPartRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

const (
	MaxTagNamespace = 32
	MaxTagValue     = 64
)

// NormalizeTag trims, lowercases and turns spaces into dashes, then checks the grammar
// namespace:value, each side [a-z0-9][a-z0-9._-]*, namespace ≤ 32 and value ≤ 64 chars.
func NormalizeTag(s string) (string, error) {
	if err := ValidateText("tag", s, 1, 256); err != nil {
		return "", err
	}
	ns, val, ok := strings.Cut(strings.ToLower(s), ":")
	if !ok {
		return "", FieldErrorf(EINVALID, "tag", "tag %q: want namespace:value, e.g. role:synth", s).Next(ListStep(ListTags, ""))
	}
	// Trim each side, then turn inner runs of spaces into one dash: "Role: Studio Desk"
	// is role:studio-desk.
	ns = strings.Join(strings.Fields(ns), "-")
	val = strings.Join(strings.Fields(val), "-")
	if !tagPartRe.MatchString(ns) || len(ns) > MaxTagNamespace {
		return "", FieldErrorf(EINVALID, "tag", "tag %q: namespace must be 1-%d chars of a-z 0-9 . _ - starting with a letter or digit", s, MaxTagNamespace)
	}
	if !tagPartRe.MatchString(val) || len(val) > MaxTagValue {
		return "", FieldErrorf(EINVALID, "tag", "tag %q: value must be 1-%d chars of a-z 0-9 . _ - starting with a letter or digit", s, MaxTagValue)
	}
	return ns + ":" + val, nil
}

// SeedNamespaces are the vocabulary's namespaces; SeedTags the suggested starting tags.
var SeedNamespaces = []string{"role", "capability", "manufacturer", "form-factor", "location", "status", "project"}

var SeedTags = []string{
	"role:synth", "role:drum-machine", "role:audio-interface", "role:controller", "role:keyboard",
	"role:sampler", "role:mixer", "role:robot", "role:sensor", "role:camera", "role:hub",
	"capability:midi-in", "capability:midi-out", "capability:audio-in", "capability:audio-out",
	"capability:usb-audio", "capability:usb-midi", "capability:navigation", "capability:gripper",
	"manufacturer:roland", "manufacturer:korg", "manufacturer:arturia", "manufacturer:novation",
	"manufacturer:focusrite", "manufacturer:behringer", "manufacturer:yamaha", "manufacturer:akai",
	"form-factor:desktop", "form-factor:keyboard", "form-factor:rack", "form-factor:pedal", "form-factor:mobile",
	"location:studio", "location:desk", "location:rack", "location:lab",
	"status:ok", "status:needs-repair", "status:loaned", "status:retired",
	"project:live-set",
}

// TagCount is a tag with the number of nodes carrying it.
type TagCount struct {
	Tag    string `json:"tag"`
	Count  int    `json:"count"`
	Seeded bool   `json:"seeded,omitempty"` // part of the seeded vocabulary
}

// TagFilter selects tags.
type TagFilter struct {
	Namespace string `json:"namespace,omitempty"`
	InUse     bool   `json:"in_use,omitempty"` // only tags on at least one node (else seeded ones too)
}

// TagService keeps tags (namespace:value, normalised) on identities and devices.
type TagService interface {
	// UpdateTags adds and removes tags (normalised) on any identity or device, returning
	// the node's tags afterwards. Adding a tag already there or removing one absent is a
	// no-op that writes no event. ENOTFOUND for an unknown target, EINVALID for a
	// malformed tag (naming it).
	UpdateTags(ctx context.Context, target string, add, remove []string) ([]string, error)
	// FindTags lists the seeded vocabulary and the tags in use, with counts.
	FindTags(ctx context.Context, f TagFilter) ([]TagCount, error)
	// FindTagged returns the node ids carrying tag, a page at a time; an unused tag is an
	// empty page.
	FindTagged(ctx context.Context, tag string, first int, after string) (ids []string, total int, next string, err error)
}
