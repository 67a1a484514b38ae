"""Small random policy/value checkpoints for agent and training tests."""
from caledonia_env.agents import checkpoint as ck


def save_small(path, num_players=2, seed=0, value_head=True, arch=None, train=None):
    """A checkpoint of a small random network (features 16, one layer of 8 per head)."""
    import torch
    arch = arch or ck.Arch(16, (8,), (8,))
    torch.manual_seed(seed)
    net = ck.build_actor_critic(arch, *ck.spaces())
    for prm in net.parameters():
        torch.nn.init.normal_(prm, std=0.3)
    sd = ck.sb3_state(net.state_dict())
    if not value_head:
        sd = {k: v for k, v in sd.items() if "value" not in k}
    extra = {} if train is None else {"train": train}
    ck.save(path, sd, ck.make_meta(arch, num_players, 0, **extra))
    return str(path)
