package main

import (
	"bufio"
	"net"
	"os"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the election scenario's child
// candidate, as the bench binary does.
func TestMain(m *testing.M) {
	candidateMain()
	os.Exit(m.Run())
}

// TestCutProxy checks that the proxy forwards both ways until cut, and
// then passes nothing either way while keeping the connection open.
func TestCutProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { // an echo server, line by line
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					_, _ = c.Write([]byte(sc.Text() + "\n"))
				}
				_ = c.Close()
			}()
		}
	}()
	p, err := startCutProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if _, err := c.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("before the cut: %q, %v", line, err)
	}
	p.Cut()
	if _, err := c.Write([]byte("lost\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	line, err := r.ReadString('\n')
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("after the cut: read %q, %v; want a timeout on an open connection", line, err)
	}
}
