package graph

// Page limits shared by every listing.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// ClampFirst returns n bounded to [1, MaxPageSize], DefaultPageSize when n ≤ 0.
func ClampFirst(n int) int {
	if n <= 0 {
		return DefaultPageSize
	}
	if n > MaxPageSize {
		return MaxPageSize
	}
	return n
}
