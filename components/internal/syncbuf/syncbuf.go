// Package syncbuf is a bytes.Buffer that several goroutines may write and
// read at once: a log sink for the components' tests, whose servers log
// from their own goroutines.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
