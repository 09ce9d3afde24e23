"""`stories`: a seeded generator of simple children's stories (the TinyStories analogue, Section 3).

A story is drawn from a small grammar: a hero with a trait meets a friend in a place, wants an
object, hits a problem, solves it with an action, and learns a lesson. The vocabulary is a few
hundred words, so the corpus is far simpler than prose or code. Story i depends only on (seed, i).
"""

from __future__ import annotations

import random

NAMES = [
    "Lily",
    "Tom",
    "Mia",
    "Ben",
    "Sara",
    "Max",
    "Anna",
    "Sam",
    "Lucy",
    "Jack",
    "Zoe",
    "Leo",
    "Emma",
    "Tim",
    "Ella",
    "Finn",
    "Ruby",
    "Noah",
    "Ivy",
    "Jake",
]
ANIMALS = ["cat", "dog", "bunny", "bird", "frog", "bear", "duck", "fox", "mouse", "puppy", "kitten", "owl"]
TRAITS = ["happy", "shy", "brave", "curious", "kind", "silly", "little", "sleepy", "busy", "gentle"]
PLACES = [
    "the park",
    "the garden",
    "the forest",
    "the beach",
    "the farm",
    "the yard",
    "the hill",
    "the lake",
    "the school",
    "the big tree",
]
OBJECTS = [
    "ball",
    "kite",
    "red hat",
    "toy car",
    "shiny stone",
    "blue cup",
    "book",
    "cake",
    "flower",
    "balloon",
    "boat",
    "drum",
    "apple",
    "teddy bear",
    "box",
]
PROBLEMS = [
    "the {o} fell into the water",
    "the wind took the {o} away",
    "the {o} was stuck in a tree",
    "the {o} broke into two parts",
    "a big dog ran off with the {o}",
    "the {o} was lost in the grass",
    "it started to rain on the {o}",
    "the {o} was too high to reach",
]
ACTIONS = [
    "asked {f} for help",
    "used a long stick",
    "climbed very slowly",
    "said sorry and tried again",
    "looked under every leaf",
    "built a small bridge",
    "called mom",
    "shared the {o} with {f}",
    "waited for the sun",
    "sang a happy song",
]
FEELINGS = ["sad", "scared", "upset", "worried", "angry", "surprised"]
LESSONS = [
    "friends help each other",
    "it is good to share",
    "being brave is not so hard",
    "you should never give up",
    "kind words make people happy",
    "it is fun to try new things",
    "slow and careful is best",
    "saying sorry makes things right",
]
OPENINGS = ["Once upon a time", "One day", "One sunny morning", "Long ago", "Once"]
CLOSINGS = [
    "From that day on, {h} always remembered that {l}.",
    "{h} smiled. {H} knew that {l}.",
    "That night, {h} went to bed happy, because {l}.",
    "The end.",
]


def story(seed: int, i: int) -> str:
    """Story number i of the corpus with this seed: a few short paragraphs."""
    r = random.Random(seed * 1_000_003 + i)
    name, animal, trait = r.choice(NAMES), r.choice(ANIMALS), r.choice(TRAITS)
    hero = name if r.random() < 0.6 else f"the {trait} {animal}"
    friend = (
        r.choice([n for n in NAMES if n != name]) if r.random() < 0.5 else f"a {r.choice(TRAITS)} {r.choice(ANIMALS)}"
    )
    place, obj, lesson = r.choice(PLACES), r.choice(OBJECTS), r.choice(LESSONS)
    cap = hero[0].upper() + hero[1:]
    he = r.choice(["He", "She"]) if hero == name else "It"
    lines = [
        f"{r.choice(OPENINGS)}, there was "
        f"{'a ' + trait + ' girl named ' if he == 'She' else 'a ' + trait + ' boy named ' if he == 'He' else ''}"
        f"{name if he != 'It' else hero}. {cap} liked to play in {place}."
    ]
    lines.append(f"{cap} had a {obj}. {he} loved the {obj} very much.")
    for _ in range(r.randint(1, 3)):
        problem = r.choice(PROBLEMS).format(o=obj)
        action = r.choice(ACTIONS).format(o=obj, f=friend)
        lines.append(f"But then {problem}. {cap} felt {r.choice(FEELINGS)}. {he} met {friend} in {place}.")
        lines.append(f"{cap} {action}. Soon the {obj} was safe again.")
    lines.append(r.choice(CLOSINGS).format(h=hero, H=he, l=lesson))
    return "\n".join(lines)


def stories(seed: int = 0, count: int = 20000) -> list[str]:
    """The `stories` corpus: `count` stories from the grammar above (duplicates removed later)."""
    return [story(seed, i) for i in range(count)]
