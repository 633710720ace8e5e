// franz-go's transactional producer and its GroupTransactSession, as compat_tests/test_franz_transactions.py
// runs them against kemu and against the reference Kafka. franz-go chooses transactions version 2 by itself
// when the cluster finalized transaction.version 2 (kgo's supportsKIP890p2). Each mode prints one JSON line.
//
//	franz epochs BOOTSTRAP TOPIC PARTITIONS TRANSACTIONAL_ID
//	franz transform BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID RECORDS
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const timeout = 60 * time.Second

// At most this many input records per transaction: the input is transformed in several.
const perTransaction = 10

type transaction struct {
	After string `json:"after"`
	Epoch int16  `json:"epoch"`
}

type record struct {
	Partition int32  `json:"partition"`
	Value     string `json:"value"`
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func emit(value any) {
	out, err := json.Marshal(value)
	if err != nil {
		fail("json: %v", err)
	}
	fmt.Println(string(out))
}

func number(text string) int {
	n, err := strconv.Atoi(text)
	if err != nil {
		fail("not a number: %q", text)
	}
	return n
}

// epochs: four transactions of one record per partition (commit, commit, abort, commit), the producer epoch
// after InitProducerId and after each end, then the topic read read_committed.
func epochs(ctx context.Context, bootstrap, topic string, partitions int, transactionalID string) {
	client, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.TransactionalID(transactionalID),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(timeout))
	if err != nil {
		fail("client: %v", err)
	}
	defer client.Close()
	_, epoch, err := client.ProducerID(ctx)
	if err != nil {
		fail("producer id: %v", err)
	}
	seen := []transaction{{"init", epoch}}
	for n, end := range []string{"commit", "commit", "abort", "commit"} {
		if err := client.BeginTransaction(); err != nil {
			fail("begin: %v", err)
		}
		for p := 0; p < partitions; p++ {
			value := fmt.Sprintf("%d-%d", n, p)
			if err := client.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: int32(p),
				Value: []byte(value)}).FirstErr(); err != nil {
				fail("produce: %v", err)
			}
		}
		try := kgo.TryCommit
		if end == "abort" {
			try = kgo.TryAbort
		}
		if err := client.EndTransaction(ctx, try); err != nil {
			fail("end: %v", err)
		}
		if _, epoch, err = client.ProducerID(ctx); err != nil {
			fail("producer id: %v", err)
		}
		seen = append(seen, transaction{end, epoch})
	}
	emit(map[string]any{"transactions": seen, "readCommitted": readCommitted(ctx, bootstrap, topic, 2*partitions)})
}

// readCommitted: the topic's records a read_committed consumer sees, until `want` of them or a quiet second.
func readCommitted(ctx context.Context, bootstrap, topic string, want int) []record {
	client, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		fail("consumer: %v", err)
	}
	defer client.Close()
	var found []record
	deadline := time.Now().Add(timeout)
	for len(found) < want && time.Now().Before(deadline) {
		poll, cancel := context.WithTimeout(ctx, time.Second)
		fetches := client.PollFetches(poll)
		cancel()
		fetches.EachRecord(func(r *kgo.Record) { found = append(found, record{r.Partition, string(r.Value)}) })
	}
	// One more quiet poll: anything beyond `want` (an aborted record shown) would be seen too.
	poll, cancel := context.WithTimeout(ctx, time.Second)
	client.PollFetches(poll).EachRecord(func(r *kgo.Record) {
		found = append(found, record{r.Partition, string(r.Value)})
	})
	cancel()
	sort.Slice(found, func(i, j int) bool {
		if found[i].Partition != found[j].Partition {
			return found[i].Partition < found[j].Partition
		}
		return found[i].Value < found[j].Value
	})
	return found
}

// transform: a GroupTransactSession reading INPUT read_committed and writing each value, prefixed "out-", to
// the same partition of OUTPUT, the group's offsets committed in each transaction (of at most perTransaction
// records), until RECORDS were committed.
func transform(ctx context.Context, bootstrap, input, output, group, transactionalID string, records int) {
	session, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(bootstrap), kgo.TransactionalID(transactionalID),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(input), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(timeout), kgo.RequireStableFetchOffsets())
	if err != nil {
		fail("session: %v", err)
	}
	defer session.Close()
	committed, transactions := 0, 0
	deadline := time.Now().Add(2 * timeout)
	for committed < records && time.Now().Before(deadline) {
		poll, cancel := context.WithTimeout(ctx, time.Second)
		fetches := session.PollRecords(poll, perTransaction)
		cancel()
		if errs := fetches.Errors(); len(errs) > 0 && !fetches.IsClientClosed() {
			for _, e := range errs {
				if e.Err != context.DeadlineExceeded {
					fail("fetch: %v", e.Err)
				}
			}
		}
		var batch []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) {
			batch = append(batch, &kgo.Record{Topic: output, Partition: r.Partition,
				Value: []byte("out-" + strings.TrimPrefix(string(r.Value), "in-"))})
		})
		if len(batch) == 0 {
			continue
		}
		if err := session.Begin(); err != nil {
			fail("begin: %v", err)
		}
		if err := session.ProduceSync(ctx, batch...).FirstErr(); err != nil {
			fail("produce: %v", err)
		}
		done, err := session.End(ctx, kgo.TryCommit)
		if err != nil {
			fail("end: %v", err)
		}
		if done {
			committed += len(batch)
			transactions++
		}
	}
	emit(map[string]any{"committed": committed, "transactions": transactions})
}

func main() {
	ctx := context.Background()
	args := os.Args[1:]
	switch {
	case len(args) == 5 && args[0] == "epochs":
		epochs(ctx, args[1], args[2], number(args[3]), args[4])
	case len(args) == 7 && args[0] == "transform":
		transform(ctx, args[1], args[2], args[3], args[4], args[5], number(args[6]))
	default:
		fail("usage: franz epochs BOOTSTRAP TOPIC PARTITIONS TRANSACTIONAL_ID | " +
			"franz transform BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID RECORDS")
	}
}
