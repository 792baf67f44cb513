"""Selection subcommands (score, select, evaluate); added to the parser by cli.py."""


def add_commands(sub, add_reader_opts, add_embed_opts, positive_int) -> None:
    return None
