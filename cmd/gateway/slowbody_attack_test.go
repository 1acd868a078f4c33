package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/faulttest"
	"github.com/socialgw/gateway/internal/redistest"
)

// TestSlowBodyAttack measures the slow-body attack against a gateway
// process with PRODUCTION=true and the default body settings
// (docs/performance-attacks.md): connections that each
// announce a 1 MiB JSON body and send one byte every 5 s, 64 from
// 127.0.0.1, then 256 spread over 127.0.0.2–5, while 127.0.0.6 sends a
// `{ __typename }` POST every half second. Every probe must be served;
// the test reports how the slow bodies were answered and when.
func TestSlowBodyAttack(t *testing.T) {
	redistest.Slow(t, "a gateway process and 320 connections held for seconds")
	gw := faulttest.StartGateway(t, "slowbodies", redistest.WithEnv(t, faulttest.Env{"REDIS_PREFIX": redistest.Prefix(t), "PRODUCTION": "true",
		"MEDIA_SIGNING_KEY": testSecret, "MEDIA_DIR": t.TempDir(), "SMTP_URL": "smtp://127.0.0.1:9"}))
	host := strings.TrimPrefix(gw.URL, "http://")
	for _, phase := range []struct {
		name string
		from map[string]int
	}{
		{"64 from one address", map[string]int{"127.0.0.1": 64}},
		{"256 over four addresses", map[string]int{"127.0.0.2": 64, "127.0.0.3": 64, "127.0.0.4": 64, "127.0.0.5": 64}},
	} {
		t.Run(phase.name, func(t *testing.T) {
			type answer struct {
				status int
				after  time.Duration
			}
			var mu sync.Mutex
			var answers []answer
			var wg sync.WaitGroup
			began := time.Now()
			for ip, n := range phase.from {
				for range n {
					c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).Dial("tcp", host)
					if err != nil {
						t.Fatal(err)
					}
					wg.Add(2)
					done := make(chan struct{})
					go func() { // one byte every 5 s
						defer wg.Done()
						fmt.Fprintf(c, "POST /query HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", host, 1<<20)
						tick := time.NewTicker(5 * time.Second)
						defer tick.Stop()
						for {
							select {
							case <-done:
								return
							case <-tick.C:
								if _, err := c.Write([]byte(" ")); err != nil {
									return
								}
							}
						}
					}()
					go func() {
						defer wg.Done()
						defer close(done)
						defer c.Close()
						c.SetReadDeadline(time.Now().Add(40 * time.Second))
						res, err := http.ReadResponse(bufio.NewReader(c), nil)
						a := answer{after: time.Since(began)}
						if err == nil {
							a.status = res.StatusCode
							res.Body.Close()
						}
						mu.Lock()
						answers = append(answers, a)
						mu.Unlock()
					}()
				}
			}
			client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
				DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.6")}}).DialContext}}
			refused := 0
			for range 16 {
				time.Sleep(500 * time.Millisecond) // the probe's pace
				res, err := client.Post(gw.URL+"/query", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"__typename":"Query"`) {
					refused++
					t.Errorf("probe: %d %s", res.StatusCode, body)
				}
			}
			wg.Wait()
			statuses := map[int]int{}
			var afters []time.Duration
			for _, a := range answers {
				statuses[a.status]++
				afters = append(afters, a.after)
			}
			slices.Sort(afters)
			t.Logf("probes refused: %d of 16; slow bodies answered %v (status: count; 0 = no answer), after %s (median) to %s (last)",
				refused, statuses, afters[len(afters)/2].Round(10*time.Millisecond), afters[len(afters)-1].Round(10*time.Millisecond))
		})
	}
}
