"""PPO in one file, CleanRL-style, on the natively batched 400 environment with masked actions.

    python examples/cleanrl_ppo.py --total-timesteps 500000 --opponents heuristic

Read it top to bottom as CleanRL's ``ppo.py``: the same loop, the same metric names
(``charts/*``, ``losses/*``) under ``<runs-dir>/<exp_name>__<seed>__<time>`` (named as
``fourhundred train`` names its runs, with a config.yaml), with TensorBoard's step the number
of learner decisions (``global_step``). At the end the actor is saved as ``policy.pt`` with
its manifest ``policy.json`` (:func:`fourhundred_agents.libraries.torch_policy.save_torch_policy`), which
plays anywhere an agent does::

    fourhundred plot runs/cleanrl_ppo__1__<time>
    fourhundred tournament --agents torch:runs/cleanrl_ppo__1__<time>/policy.pt random heuristic

What 400 changes:

- the environment is ``gym.make_vec("FourHundred-v0", vectorization_mode=
  "vector_entry_point")``: B tables in one numpy batch, no SyncVectorEnv, with
  ``autoreset_mode=SAME_STEP`` (the step that ends an episode already returns the next
  one's first observation: CleanRL's original convention, so ``next_done`` is right);
- the policy is a masked Categorical: illegal actions get a logit of -1e8 (not -inf, whose
  entropy is NaN). No mask row is ever all 0, so no row is all -1e8. The actor is
  :class:`~fourhundred_agents.libraries.torch_policy.MLPPolicy`, ``actor(obs, mask) -> logits``, the
  module ``torch:`` plays;
- episode statistics come from the env's own results (``info["outcome"]``, ``"points"``,
  valid where ``info["_outcome"]``), not from ``final_info``, which Gymnasium 1.x no longer
  emits by default.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
import yaml
from torch import nn
from torch.distributions import Categorical

import fourhundred_env.envs  # noqa: F401 - registers FourHundred-v0
from fourhundred_agents.libraries.torch_policy import MLPPolicy, save_torch_policy


@dataclass
class Args:
    """Every setting, one command-line flag each (``--num-envs 128``)."""

    exp_name: str = "cleanrl_ppo"
    """Run name: runs/<exp_name>__<seed>__<time>."""
    seed: int = 1
    """Seeds the tables (table i: seed + i), torch and numpy."""
    opponents: str = "random"
    """Agent spec of the seats the learner does not hold."""
    episode: str = "hand"
    """"hand" (one hand from drawn scores) or "match"."""
    total_timesteps: int = 500_000
    """Learner decisions to train on."""
    learning_rate: float = 2.5e-4
    """Adam's step size (annealed linearly to 0)."""
    num_envs: int = 128
    """Tables in the batch."""
    num_steps: int = 32
    """Decisions per table per rollout."""
    gamma: float = 1.0
    """Discount (episodes are short and the points come at their end)."""
    gae_lambda: float = 0.95
    """GAE's lambda."""
    num_minibatches: int = 4
    """Minibatches per epoch."""
    update_epochs: int = 4
    """Passes over each rollout."""
    clip_coef: float = 0.2
    """PPO's clip."""
    ent_coef: float = 0.01
    """Entropy bonus."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient clipping."""
    reward_scale: float = 0.05
    """Rewards (hand points, up to 40) times this."""
    torch_threads: int = 1
    """torch's intra-op threads (one is fastest for these small networks on a busy machine)."""
    tensorboard: bool = True
    """Write TensorBoard events (needs the tensorboard package)."""
    runs_dir: str = "runs"
    """Where run folders go."""


def field_help(cls: type) -> dict[str, str]:
    """Each field's docstring (the string under it in the class body), for its flag's help."""
    body = ast.parse(inspect.getsource(cls)).body[0].body
    return {
        a.target.id: " ".join(b.value.value.split()).replace("%", "%%")
        for a, b in itertools.pairwise(body)
        if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name)
        and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
    }  # fmt: skip


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, one flag per field, its docstring as the help."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    docs = field_help(Args)
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        text = f"{docs[f.name]} (default: %(default)s)"
        if isinstance(f.default, bool):
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=f.default, help=text
            )
        else:
            parser.add_argument(flag, type=type(f.default), default=f.default, help=text)
    return Args(**vars(parser.parse_args(argv)))


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    """Orthogonal weights, constant bias (CleanRL's)."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    """Actor and critic MLPs over the 588-float observation; masked Categorical policy."""

    def __init__(self, obs_size: int, num_actions: int) -> None:
        super().__init__()

        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_size, 256)), nn.Tanh(),
            layer_init(nn.Linear(256, 256)), nn.Tanh(),
            layer_init(nn.Linear(256, 1), std=1.0),
        )  # fmt: skip
        # the same MLP, as the module torch:PATH plays: actor(obs, mask) -> masked logits
        self.actor = MLPPolicy(obs_size, num_actions, hidden=(256, 256), activation="tanh")
        linears = [m for m in self.actor.net if isinstance(m, nn.Linear)]
        for layer in linears:
            layer_init(layer, std=0.01 if layer is linears[-1] else np.sqrt(2))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(
        self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """x (N, 588) float32, mask (N, 66) bool -> action, log-prob, entropy, value."""
        probs = Categorical(logits=self.actor(x, mask))  # illegal actions: -1e8
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def main(args: Args) -> dict[str, float]:
    """Train and save; returns the last rollout's mean episode return and win rate."""
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_iterations = max(1, args.total_timesteps // batch_size)
    run_name = f"{args.exp_name}__{args.seed}__{time.strftime('%Y%m%d-%H%M%S')}"
    run_dir = Path(args.runs_dir) / run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(
        yaml.safe_dump({"name": args.exp_name, **dataclasses.asdict(args)})
    )
    writer = None
    if args.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(run_dir))
        writer.add_text("hyperparameters", str(dataclasses.asdict(args)))
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)

    envs = gym.make_vec(
        "FourHundred-v0",
        num_envs=args.num_envs,
        vectorization_mode="vector_entry_point",
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
        opponents=args.opponents,
        episode=args.episode,
    )
    obs_size = envs.single_observation_space["observation"].shape[0]
    num_actions = envs.single_action_space.n
    agent = Agent(obs_size, num_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    obs = torch.zeros((args.num_steps, args.num_envs, obs_size))
    masks = torch.zeros((args.num_steps, args.num_envs, num_actions), dtype=torch.bool)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    global_step = 0
    start_time = time.time()
    next_obs_dict, _ = envs.reset(seed=args.seed)
    next_obs = torch.from_numpy(next_obs_dict["observation"])
    next_mask = torch.from_numpy(next_obs_dict["action_mask"].astype(bool))
    next_done = torch.zeros(args.num_envs)
    stats = {"return": 0.0, "win_rate": 0.0}

    for iteration in range(1, num_iterations + 1):
        optimizer.param_groups[0]["lr"] = (
            1.0 - (iteration - 1.0) / num_iterations
        ) * args.learning_rate
        episode_points, episode_wins = [], []
        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
            values[step] = value.flatten()
            actions[step], logprobs[step] = action, logprob
            next_obs_dict, reward, terminations, truncations, infos = envs.step(action.numpy())
            next_done = torch.from_numpy(np.logical_or(terminations, truncations)).float()
            rewards[step] = torch.from_numpy(reward).float() * args.reward_scale
            next_obs = torch.from_numpy(next_obs_dict["observation"])
            next_mask = torch.from_numpy(next_obs_dict["action_mask"].astype(bool))
            if "outcome" in infos:  # the learner's results, where an episode ended
                ended = infos["_outcome"]
                episode_points += infos["points"][ended].tolist()
                episode_wins += (infos["outcome"][ended] == 1).tolist()

        if episode_points:
            stats = {
                "return": float(np.mean(episode_points)),
                "win_rate": float(np.mean(episode_wins)),
            }
            if writer:
                writer.add_scalar("charts/episodic_return", stats["return"], global_step)
                writer.add_scalar("charts/win_rate", stats["win_rate"], global_step)

        # bootstrap value if not done (GAE)
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = (
                    delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
                )
            returns = advantages + values

        b_obs, b_masks = obs.reshape(-1, obs_size), masks.reshape(-1, num_actions)
        b_logprobs, b_actions = logprobs.reshape(-1), actions.reshape(-1)
        b_advantages, b_returns, b_values = (
            advantages.reshape(-1),
            returns.reshape(-1),
            values.reshape(-1),
        )

        b_inds = np.arange(batch_size)
        clipfracs = []
        for _epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                mb = b_inds[start : start + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb], b_masks[mb], b_actions[mb]
                )
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_adv = b_advantages[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(
                    -mb_adv * ratio,
                    -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef),
                ).mean()
                v_loss = 0.5 * ((newvalue.view(-1) - b_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        y_pred, y_true = b_values.numpy(), b_returns.numpy()
        var_y = np.var(y_true)
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
        sps = int(global_step / (time.time() - start_time))
        if writer:
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
            writer.add_scalar("losses/value_loss", v_loss.item(), global_step)
            writer.add_scalar("losses/policy_loss", pg_loss.item(), global_step)
            writer.add_scalar("losses/entropy", entropy_loss.item(), global_step)
            writer.add_scalar("losses/approx_kl", approx_kl.item(), global_step)
            writer.add_scalar("losses/clipfrac", np.mean(clipfracs), global_step)
            writer.add_scalar("losses/explained_variance", explained_var, global_step)
            writer.add_scalar("charts/SPS", sps, global_step)
            writer.add_scalar("charts/decisions", global_step, global_step)  # plot's x axis
        print(
            f"global_step={global_step} SPS={sps} return={stats['return']:.2f} "
            f"win_rate={stats['win_rate']:.2f}"
        )

    envs.close()
    if writer:
        writer.close()
    policy, _ = save_torch_policy(run_dir / "policy.pt", agent.actor, library="cleanrl")
    print(f"policy: {policy} (play it as torch:{policy})")
    return stats


if __name__ == "__main__":
    main(parse_args())
