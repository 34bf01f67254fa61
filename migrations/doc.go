// Package migrations owns devgraph's on-disk format: the bucket layout, the meta keys,
// the record encodings of every schema version the file has had, and the ordered steps
// that carry a file from one version to the next.
//
// The schema version lives in the meta bucket under "version". Opening a file at an
// older version copies it beside itself (<db>.bak-v<N>-<timestamp>) and then applies
// each step in its own transaction, bumping the version inside that transaction, so a
// crash mid-way leaves a file at some whole version that the next open continues from.
// A file written by a newer devgraph is refused, never guessed at.
//
// Versions:
//
//	1  changelog events stored as JSON (graph.Event with hex hashes)
//	2  changelog events stored in a compact binary record (see EncodeEvent):
//	   raw hashes and uuids, varint time, before/after packed with a static token table
//	   (and deflated when large)
//	3  declared relations: the relations, reladj (per node: its counter, out and in
//	   entries, and the tuple index under the from node), reltypes and relcounts
//	   buckets, and the count:relations meta counter; the step adds the empty buckets
//
// bbolt is used here and in package store only.
package migrations
