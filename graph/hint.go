package graph

import "context"

// HintService keeps the fingerprints identities hold as hints.
type HintService interface {
	// AddHints adds fingerprints as hints. A unit-class fingerprint held by another
	// identity is ECONFLICT naming it unless move is set, which moves it (hint.move).
	// A hint the identity already holds is EINVALID ("duplicate").
	AddHints(ctx context.Context, id string, fps []Fingerprint, move bool) (*Identity, error)
	// RemoveHints removes hints; EINVALID for a hint the identity does not hold.
	RemoveHints(ctx context.Context, id string, fps []Fingerprint) (*Identity, error)
	// FindHintHolders looks fingerprints up in the hint index: for each one, the ids of
	// the identities holding it (absent when none). Never a scan.
	FindHintHolders(ctx context.Context, fps []Fingerprint) (map[Fingerprint][]string, error)
}
