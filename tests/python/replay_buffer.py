"""replay_buffer.py — a SIMULATED DQN whose replay buffer is kept on the device (CleanRL's
dqn_atari.py with SB3's ReplayBuffer moved to the GPU): the Nature CNN Q-network trained in fp32
by Adam, its target network (a deepcopy, synced by an in-place copy), and a plain class
(no nn.Module) that preallocates the buffer with torch.zeros(..., device="cuda"): uint8
observations and next observations (N x 4 x 84 x 84 each), int64 actions, fp32 rewards and dones.
Each environment step writes one frame into it; every --train-frequency steps one update samples
--batch-size transitions by index. The buffer is the program's data, never a weight: no gradient,
no optimizer state. Prints its truth (VRAMTRACE_TORCH_STATS): the Q-network's and the target's
bytes, the trainable count, the buffer's bytes, the gradients' and Adam's bytes, the optimizer
steps; an out-of-memory error says where (oom_phase "buffer": its allocation, "update": a step). With
--in-main the buffer's storage is made in main() itself, beside the Q-network's parameters and the
target's freeze (requires_grad_(False)), and handed to the class. Used by
tests/integration/replay_buffer.sh."""
import argparse
import copy
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom, state_tensors, tensor_bytes  # noqa: E402


class QNetwork(nn.Module):
    def __init__(self, n_actions):
        super().__init__()
        self.network = nn.Sequential(
            nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(), nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(),
            nn.Linear(512, n_actions))

    def forward(self, x):
        return self.network(x / 255.0)


class DeviceReplayBuffer:
    def __init__(self, size, device, made=None):
        self.size, self.pos = size, 0
        if made is not None:
            self.observations, self.next_observations, self.actions, self.rewards, self.dones = made
            return
        self.observations = torch.zeros(size, 4, 84, 84, dtype=torch.uint8, device=device)
        self.next_observations = torch.zeros(size, 4, 84, 84, dtype=torch.uint8, device=device)
        self.actions = torch.zeros(size, 1, dtype=torch.int64, device=device)
        self.rewards = torch.zeros(size, 1, dtype=torch.float32, device=device)
        self.dones = torch.zeros(size, 1, dtype=torch.float32, device=device)

    def tensors(self):
        return [self.observations, self.next_observations, self.actions, self.rewards, self.dones]

    def add(self, obs, next_obs):
        o, n = obs.to("cuda"), next_obs.to("cuda")
        self.observations[self.pos].copy_(o)
        self.next_observations[self.pos].copy_(n)
        self.pos = (self.pos + 1) % self.size

    def sample(self, batch_size):
        idx = torch.randint(0, self.size, (batch_size,)).to("cuda")
        return self.observations[idx], self.next_observations[idx], self.rewards[idx]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--buffer-size", type=int, default=20000)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--learning-starts", type=int, default=4)
    ap.add_argument("--train-frequency", type=int, default=2)
    ap.add_argument("--total-timesteps", type=int, default=12)
    ap.add_argument("--in-main", action="store_true")
    a = ap.parse_args()
    truth = {"batch_size": a.batch_size, "buffer_size": a.buffer_size, "steps": 0, "oom": False,
             "oom_phase": None, "buffer_bytes_planned": a.buffer_size * (2 * 4 * 84 * 84 + 16)}
    q = QNetwork(6).to("cuda")
    params = list(q.parameters())
    truth.update(param_bytes=tensor_bytes(params), trainable_params=sum(p.numel() for p in params))
    target = copy.deepcopy(q)
    for p in target.parameters():
        p.requires_grad_(False)
    truth["target_bytes"] = tensor_bytes(target.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.0, foreach=True)
    try:
        if a.in_main:  # the storage made here, in main() (CleanRL-style scripts without a class)
            obs = torch.zeros(a.buffer_size, 4, 84, 84, dtype=torch.uint8, device="cuda")
            next_obs = torch.zeros(a.buffer_size, 4, 84, 84, dtype=torch.uint8, device="cuda")
            actions = torch.zeros(a.buffer_size, 1, dtype=torch.int64, device="cuda")
            rewards = torch.zeros(a.buffer_size, 1, dtype=torch.float32, device="cuda")
            dones = torch.zeros(a.buffer_size, 1, dtype=torch.float32, device="cuda")
            rb = DeviceReplayBuffer(a.buffer_size, "cuda", made=(obs, next_obs, actions, rewards, dones))
            del obs, next_obs, actions, rewards, dones
        else:
            rb = DeviceReplayBuffer(a.buffer_size, "cuda")
    except torch.OutOfMemoryError as e:
        record_oom(truth, "buffer", e)
        return finish(torch, truth)
    truth["buffer_bytes"] = tensor_bytes(rb.tensors())
    try:
        for step in range(a.total_timesteps):
            rb.add(torch.randint(0, 255, (4, 84, 84), dtype=torch.uint8),
                   torch.randint(0, 255, (4, 84, 84), dtype=torch.uint8))
            if step < a.learning_starts or step % a.train_frequency:
                continue
            obs, nxt, rew = rb.sample(a.batch_size)
            with torch.no_grad():
                td = rew.flatten() + target(nxt.float()).sum(1) * 0.99
            loss = F.mse_loss(td, q(obs.float()).sum(1))
            opt.zero_grad()
            loss.backward()
            truth["grad_bytes"] = tensor_bytes(p.grad for p in params)
            opt.step()
            truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
            truth["steps"] += 1
            del obs, nxt, rew, td, loss
    except torch.OutOfMemoryError as e:
        record_oom(truth, "update", e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
