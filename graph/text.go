package graph

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on text a user types.
const (
	MaxNameLen = 200       // identity names, in bytes
	MaxNoteLen = 16 * 1024 // note bodies, in bytes
	MaxDataLen = 64 * 1024 // identity data JSON, in bytes
	MaxMsgLen  = 1024      // changelog "why" messages
)

// ValidateText checks text a user typed: valid UTF-8, no NUL bytes, length within
// [min, max] bytes (max 0: no limit). field names the input in the error. The length
// is checked first, so an oversized input costs nothing to refuse.
func ValidateText(field, s string, min, max int) error {
	if max > 0 && len(s) > max {
		return FieldErrorf(EINVALID, field, "%s is %d bytes; the limit is %d", field, len(s), max)
	}
	if !utf8.ValidString(s) {
		return FieldErrorf(EINVALID, field, "%s is not valid UTF-8; send text as UTF-8", field)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return FieldErrorf(EINVALID, field, "%s contains a NUL byte; remove it", field)
	}
	if len(s) < min {
		if min == 1 {
			return FieldErrorf(EINVALID, field, "%s is empty; give a non-empty %s", field, field)
		}
		return FieldErrorf(EINVALID, field, "%s is %d bytes; at least %d needed", field, len(s), min)
	}
	return nil
}

// EscapeHardwareText keeps text read from hardware as read where it is valid UTF-8 and
// escapes each invalid byte as \xNN (and NUL as \x00) where it is not.
func EscapeHardwareText(b []byte) string {
	if utf8.Valid(b) && !strings.ContainsRune(string(b), 0) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if (r == utf8.RuneError && size <= 1) || r == 0 {
			fmt.Fprintf(&sb, `\x%02x`, b[0])
			b = b[1:]
			continue
		}
		sb.Write(b[:size])
		b = b[size:]
	}
	return sb.String()
}
