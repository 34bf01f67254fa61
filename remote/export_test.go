package remote

import "net"

// SetServerUID replaces how the client learns the server's uid; the returned func
// restores it.
func SetServerUID(f func(*net.UnixConn) (int, error)) (restore func()) {
	old := serverUID
	serverUID = f
	return func() { serverUID = old }
}
