// Package redisproc starts and stops a throwaway redis-server from PATH: on
// a free loopback port (never 6379), saving nothing to disk, and killed by
// the kernel when the process that started it dies. Tests (through
// internal/redistest) and cmd/bench use it.
package redisproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotFound says redis-server is not on PATH.
var ErrNotFound = errors.New("redis-server not found on PATH")

// Server is a running redis-server.
type Server struct {
	// Addr is the server's host:port on 127.0.0.1.
	Addr   string
	cmd    *exec.Cmd
	dir    string
	path   string
	args   []string
	exited chan struct{} // closed when the process has ended
}

// URL returns a redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr }

// Stop kills the server and removes its working directory. It is safe to
// call more than once.
func (s *Server) Stop() {
	if s == nil || s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	_ = os.RemoveAll(s.dir)
	s.cmd = nil
}

// Kill ends the server with SIGKILL, as a crash would, and keeps its
// directory (with any append-only file in it) for Restart.
func (s *Server) Kill() {
	if s == nil || s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// Pause freezes the server (SIGSTOP): connections stay open and nothing
// answers, as with a stalled machine. Resume thaws it.
func (s *Server) Pause() error { return s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume thaws a paused server (SIGCONT).
func (s *Server) Resume() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Restart starts the server again after Kill, on the same port and
// directory with the same arguments: with appendonly set it reloads what
// it had persisted, otherwise it comes back empty.
func (s *Server) Restart() error {
	select {
	case <-s.exited:
	default:
		return errors.New("redis-server is still running")
	}
	return s.launch()
}

// Start starts a redis-server from PATH, with extra command-line arguments
// appended (e.g. "--maxmemory", "1gb"), and returns once it answers PING.
// A port taken between choosing it and binding it is retried on another.
func Start(extra ...string) (*Server, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotFound
	}
	for try := 0; ; try++ {
		s, err := start(path, extra)
		if err == nil || try == 4 {
			return s, err
		}
	}
}

// Version returns the output of redis-server --version, or "" when it is
// not on PATH.
func Version() string {
	out, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(out))
}

func start(path string, extra []string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	dir, err := os.MkdirTemp("", "redisproc")
	if err != nil {
		return nil, err
	}
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning"}, extra...)
	s := &Server{Addr: addr, dir: dir, path: path, args: args}
	if err := s.launch(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// launch starts the process and waits until it answers PING.
func (s *Server) launch() error {
	cmd := exec.Command(s.path, s.args...)
	// The server dies with this process even when it is killed before it
	// can call Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	exited := s.exited
	go func() { _ = cmd.Wait(); close(exited) }()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited: // e.g. the port was taken meanwhile
			return fmt.Errorf("redis-server on %s exited at start", s.Addr)
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("redis-server on %s did not answer: %w", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort asks the kernel for a free loopback port, never Redis's
// standard one.
func freePort() (int, error) {
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port != 6379 {
			return port, nil
		}
	}
}
