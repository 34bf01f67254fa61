package identity_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine a test starts (the poll loop, the store's commit and notify loops) is
// stopped and waited for by Close: none may outlive the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	removeBenchStore()
	removeRelBenchStore()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goroutines outlived the tests: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
