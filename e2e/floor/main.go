// Command floor is what a durable graph_note costs on a machine before any of devgraph's
// own work: BenchmarkStdioNoteFloor runs it beside BenchmarkStdioNote. It reads
// newline-delimited JSON-RPC requests on stdin and answers each with a result the size
// of graph_note's, once it has made the same writes as bbolt's commit of a note: 11
// scattered 4 KB pages, an fdatasync, the meta page at the front of the file, an
// fdatasync. The file (its one argument) is written a page at a time before the first
// request, as bbolt writes its file.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
)

const (
	fileSize    = 8 << 20
	pageSize    = 4096
	notePages   = 11 // bbolt's pages for a note (strace of BenchmarkStdioNote), the meta page aside
	answerBytes = 600
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: floor FILE")
		os.Exit(2)
	}
	if err := serve(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func serve(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	page := make([]byte, pageSize)
	for off := int64(0); off < fileSize; off += pageSize {
		if _, err := f.WriteAt(page, off); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	text := strings.Repeat("x", answerBytes)
	var k int64
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return nil // stdin closed: done
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 {
			continue // a notification: no answer
		}
		for i := 0; i < notePages; i++ {
			k++
			page[0] = byte(k)
			off := 2*pageSize + (k*7919)%(fileSize/pageSize-2)*pageSize // scattered, past the two meta pages
			if _, err := f.WriteAt(page, off); err != nil {
				return err
			}
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return err
		}
		if _, err := f.WriteAt(page, (k%2)*pageSize); err != nil { // the meta pages, in turn
			return err
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return err
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`+"\n", req.ID, text)
		if err := out.Flush(); err != nil {
			return err
		}
	}
}
