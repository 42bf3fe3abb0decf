package kernel

import (
	"context"
	"os"

	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// brokers are the kernel's broker children.
type brokers struct {
	k *Kernel
}

func newBrokers(k *Kernel) *brokers { return &brokers{k: k} }

func (b *brokers) startAll() {}
func (b *brokers) stopAll()  {}

func (b *brokers) info() []proto.BrokerInfo { return []proto.BrokerInfo{} }

func (k *Kernel) handleRead(ctx context.Context, c *call, req *proto.FileRequest) (*proto.Empty, []*os.File, error) {
	return nil, nil, wire.Errorf(proto.CodeBroker, "the file broker is not available")
}

func (k *Kernel) handleWrite(ctx context.Context, c *call, req *proto.FileRequest) (*proto.Empty, []*os.File, error) {
	return nil, nil, wire.Errorf(proto.CodeBroker, "the file broker is not available")
}
