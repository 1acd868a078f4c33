package gqlerr

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestUnavailable: the errors of a store that cannot answer now (a server
// loading its data after a restart, a cluster failing over) tell the
// client to retry, as a refused connection does; the request's own errors
// do not. The server errors are real replies, parsed by go-redis, from a
// listener that answers every command with one error line.
func TestUnavailable(t *testing.T) {
	tests := []struct {
		reply string
		want  bool
	}{
		{"LOADING Redis is loading the dataset in memory", true},
		{"CLUSTERDOWN The cluster is down", true},
		{"TRYAGAIN Multiple keys request during rehashing of slot", true},
		{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", true},
		{"READONLY You can't write against a read only replica.", true},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", false},
		{"ERR unknown command", false},
	}
	for _, tc := range tests {
		t.Run(tc.reply, func(t *testing.T) {
			err := fmt.Errorf("check token revocation: %w", replyError(t, tc.reply))
			if got := unavailable(err); got != tc.want {
				t.Errorf("unavailable(%v) = %v, want %v", err, got, tc.want)
			}
		})
	}
}

// replyError returns the error go-redis makes of a server's error reply.
func replyError(t *testing.T, reply string) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			// One command: an array header and its bulk strings.
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			var n int
			if _, err := fmt.Sscanf(line, "*%d", &n); err != nil {
				return
			}
			for range 2 * n {
				if _, err := r.ReadString('\n'); err != nil {
					return
				}
			}
			if _, err := c.Write([]byte("-" + reply + "\r\n")); err != nil {
				return
			}
		}
	}()
	rdb := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer rdb.Close()
	err = rdb.Get(context.Background(), "k").Err()
	if err == nil {
		t.Fatal("no error")
	}
	return err
}
