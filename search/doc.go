// Package search is devgraph's name index: the one fuzzy search behind GraphQL find and
// MCP graph_find, and the "did you mean" of an unknown id.
//
// Finder keeps every identity's and device's name in memory, pre-filtered by a per-name
// character mask and substring tiers before sahilm/fuzzy scores at most a thousand
// candidates. It reads through a graph.NameSource and follows the changelog, so a find
// right after a write sees it. Over a store (a graph.NameIndex) it is built from the
// store's name index without decoding an identity, catches up from the new events'
// headers only, reads display names only for the candidates a search ranks, and reads
// the tag index on the first search by tag (or in Warm, which a server runs at start). It implements graph.Finder, and graph.Suggester for the
// store: an unknown identity or device id is answered from the index instead of a scan
// of the store's keys.
//
// sahilm/fuzzy is imported here and nowhere else.
package search
