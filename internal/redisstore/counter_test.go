package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// cmdCounts are what a store sent to Redis and got back since the last
// take.
type cmdCounts struct {
	// cmds are the commands sent; hashes the reads of post hashes (HMGET
	// of a {p…} key), of which screens ask for three fields (screening)
	// and full ones for more (a visibility check).
	cmds, hashes, screens, full int
	// items are the elements of the list replies received.
	items int
	// touched: a command named a key of the counter's watch.
	touched bool
}

// cmdCounter is a go-redis hook that counts cmdCounts, and tells whether
// a command named a key of watch.
type cmdCounter struct {
	watch map[string]bool
	mu    sync.Mutex
	n     cmdCounts
}

func (c *cmdCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *cmdCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		c.count([]redis.Cmder{cmd})
		return err
	}
}

func (c *cmdCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		c.count(cmds)
		return err
	}
}

func (c *cmdCounter) count(cmds []redis.Cmder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cmd := range cmds {
		c.n.cmds++
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok && c.watch[s] {
				c.n.touched = true
			}
		}
		if cmd.Name() == "hmget" && strings.Contains(fmt.Sprint(cmd.Args()[1]), "{p") {
			c.n.hashes++
			if len(cmd.Args()) == 5 {
				c.n.screens++
			} else {
				c.n.full++
			}
		}
		switch r := cmd.(type) {
		case *redis.StringSliceCmd:
			c.n.items += len(r.Val())
		case *redis.SliceCmd:
			c.n.items += len(r.Val())
		case *redis.BoolSliceCmd:
			c.n.items += len(r.Val())
		}
	}
}

// take returns the counts since the last take and starts again at 0.
func (c *cmdCounter) take() cmdCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = cmdCounts{}
	return n
}
