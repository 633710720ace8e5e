// Command kfake-bench runs franz-go's fake Kafka cluster (pkg/kfake) as a broker for benchmarks/run.py:
// one broker on 127.0.0.1, records in memory, until SIGTERM or SIGINT.
//
// kfake's own main.go (build tag "none") binds the fixed ports 9092-9094 and serves pprof on :6060; on a
// machine shared with other brokers and tests, this one binds the port it is given (0: any free one) and
// prints the address it bound as its first stdout line, which the benchmark waits for:
//
//	kfake serving on 127.0.0.1:PORT
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

// seeds collects repeated -seed-topic NAME:PARTITIONS flags.
type seeds map[string]int32

func (s seeds) String() string { return fmt.Sprint(map[string]int32(s)) }

func (s seeds) Set(value string) error {
	name, count, ok := strings.Cut(value, ":")
	if !ok || name == "" {
		return fmt.Errorf("want NAME:PARTITIONS, got %q", value)
	}
	partitions, err := strconv.ParseInt(count, 10, 32)
	if err != nil || partitions < 1 {
		return fmt.Errorf("want a positive partition count in %q", value)
	}
	s[name] = int32(partitions)
	return nil
}

func main() {
	port := flag.Int("port", 0, "port to listen on, on 127.0.0.1 (0: any free one)")
	// Kafka's shipped server.properties has num.partitions=1 (kfake's own default is 10); the benchmark
	// creates every topic it uses with an explicit count, so this only shapes auto-created topics.
	partitions := flag.Int("default-partitions", 1, "partitions of auto-created topics")
	topics := seeds{}
	flag.Var(topics, "seed-topic", "NAME:PARTITIONS, a topic that exists from the start (repeatable)")
	flag.Parse()

	opts := []kfake.Opt{
		kfake.Ports(*port), // one port: one broker
		kfake.DefaultNumPartitions(*partitions),
		// As Kafka's auto.create.topics.enable=true default: a client's Metadata may create a topic.
		kfake.AllowAutoTopicCreation(),
	}
	for name, count := range topics {
		opts = append(opts, kfake.SeedTopics(count, name))
	}
	cluster, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfake: %v\n", err)
		os.Exit(1)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt)
	fmt.Printf("kfake serving on %s\n", cluster.ListenAddrs()[0])
	<-signals
	cluster.Close()
}
