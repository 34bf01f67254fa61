package etcdtest

import (
	"fmt"
	"os"
	"sync"
)

// Standalone is a TB for a program that is not a test, such as a load command: TempDir makes
// directories under one temporary directory, Close runs the cleanups (stopping every etcd
// member) and removes it, and Fatalf or Skipf prints the message, closes, and exits 1.
type Standalone struct {
	mu       sync.Mutex
	root     string
	n        int
	failed   bool
	cleanups []func()
}

// NewStandalone makes the temporary directory that TempDir's directories go under.
func NewStandalone() (*Standalone, error) {
	root, err := os.MkdirTemp("", "etcdtest-")
	if err != nil {
		return nil, fmt.Errorf("etcdtest: temp dir: %w", err)
	}
	return &Standalone{root: root}, nil
}

func (s *Standalone) Helper() {}

func (s *Standalone) Cleanup(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanups = append(s.cleanups, f)
}

func (s *Standalone) TempDir() string {
	s.mu.Lock()
	s.n++
	dir := fmt.Sprintf("%s/%03d", s.root, s.n)
	s.mu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.Fatalf("etcdtest: temp dir: %v", err)
	}
	return dir
}

func (s *Standalone) Failed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

func (s *Standalone) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func (s *Standalone) Fatalf(format string, args ...any) {
	s.mu.Lock()
	s.failed = true
	s.mu.Unlock()
	s.Logf(format, args...)
	s.Close()
	os.Exit(1)
}

func (s *Standalone) Skipf(format string, args ...any) { s.Fatalf(format, args...) }

// Close runs the cleanups, last registered first, and removes the temporary directory. It is
// safe to call twice.
func (s *Standalone) Close() {
	s.mu.Lock()
	fs := s.cleanups
	s.cleanups = nil
	s.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	os.RemoveAll(s.root)
}
