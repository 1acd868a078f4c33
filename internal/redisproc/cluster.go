package redisproc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a local Redis Cluster of throwaway redis-server processes:
// masters with replicas each, every node on its own free loopback port.
type Cluster struct {
	// Nodes are the cluster's servers, in the order given to
	// redis-cli --cluster create (masters first).
	Nodes []*Server
	// replicas is the number of replicas per master WaitOK waits for
	// while every node runs.
	replicas int
}

// Addrs returns host:port of every node.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// URL returns the cluster in go-redis's cluster URL form
// (redis://host1:port1?addr=host2:port2&…), the form REDIS_URL takes with
// REDIS_CLUSTER=true.
func (c *Cluster) URL() string {
	addrs := c.Addrs()
	u := "redis://" + addrs[0]
	for i, a := range addrs[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + a
	}
	return u
}

// Client returns a cluster client of the cluster; the caller closes it.
func (c *Cluster) Client() *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
}

// Stop kills every node. It is safe to call more than once.
func (c *Cluster) Stop() {
	if c == nil {
		return
	}
	for _, n := range c.Nodes {
		n.Stop()
	}
}

// StartCluster starts masters×(1+replicas) cluster-enabled redis-servers,
// joins them with redis-cli --cluster create (slots spread evenly over the
// masters, replicas assigned by redis-cli) and returns once every node
// reports cluster_state:ok and agrees on the slot map. Failover is quick
// (cluster-node-timeout 1 s) so fault tests stay short.
func StartCluster(masters, replicas int) (*Cluster, error) {
	if masters < 3 {
		return nil, errors.New("redis cluster needs at least three masters")
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("redis-cli not found on PATH: %w", ErrNotFound)
	}
	c := &Cluster{}
	for i := 0; i < masters*(1+replicas); i++ {
		// Each node keeps its nodes.conf in its own working directory.
		s, err := Start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "1000", "--cluster-require-full-coverage", "no",
			"--cluster-replica-validity-factor", "0")
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("start cluster node: %w", err)
		}
		c.Nodes = append(c.Nodes, s)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", fmt.Sprint(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %v: %s", err, out)
	}
	c.replicas = replicas
	if err := c.WaitOK(30 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// WaitOK waits until every live node reports cluster_state:ok, all of them
// list the same number of masters holding slots, and the cluster client
// can write to every master (a failover or a restart has settled).
func (c *Cluster) WaitOK(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if last = c.check(); last == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("cluster not ok after %s: %w", timeout, last)
}

func (c *Cluster) check() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var live []string
	want := 1 + c.replicas // nodes per slot range
	for _, n := range c.Nodes {
		if n.cmd == nil {
			// Stopped on purpose: its replica took over and has none.
			want = 1
		}
	}
	for _, n := range c.Nodes {
		if n.cmd == nil {
			continue
		}
		live = append(live, n.Addr)
		rdb := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
		info, err := rdb.ClusterInfo(ctx).Result()
		if err == nil && !strings.Contains(info, "cluster_state:ok") {
			err = fmt.Errorf("%s: cluster_state not ok", n.Addr)
		}
		if err == nil {
			// Every node sees every slot range with its master and,
			// while no node is stopped, all of its replicas.
			var slots []redis.ClusterSlot
			slots, err = rdb.ClusterSlots(ctx).Result()
			for _, r := range slots {
				if err == nil && len(r.Nodes) < want {
					err = fmt.Errorf("%s: slots %d-%d have %d nodes", n.Addr, r.Start, r.End, len(r.Nodes))
				}
			}
		}
		var replica bool
		if err == nil {
			role, rerr := rdb.Do(ctx, "ROLE").Slice()
			err = rerr
			replica = err == nil && len(role) > 0 && role[0] == "slave"
			if replica && len(role) > 3 && role[3] != "connected" {
				err = fmt.Errorf("%s: replica not yet in sync", n.Addr)
			}
		}
		rdb.Close()
		if err != nil {
			return err
		}
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: live, MaxRedirects: 0})
	defer cc.Close()
	// Every master answers a write for a key of its own.
	return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return m.Ping(ctx).Err()
	})
}

// Master returns the node serving key's slot as master, or nil.
func (c *Cluster) Master(key string) (*Server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cc := c.Client()
	defer cc.Close()
	slot, err := cc.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	for _, r := range slots {
		if int64(r.Start) <= slot && slot <= int64(r.End) && len(r.Nodes) > 0 {
			for _, n := range c.Nodes {
				if n.Addr == r.Nodes[0].Addr {
					return n, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("no master for slot %d", slot)
}
