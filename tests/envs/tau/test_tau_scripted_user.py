"""The deterministic τ-bench customer: opening, confirmations, answers and τ2's stop tokens."""

from __future__ import annotations

from envsched_gym.envs.tau.scripted_user import OUT_OF_SCOPE, STOP, TRANSFER, ScriptedTauUser, first_person, opening_message

from envsched_gym import EnvSpec, Episode, Message, TaskSpec

SCENARIO = {
    "persona": None,
    "instructions": {
        "domain": "retail",
        "reason_for_call": "You want to return the water bottle from order #W123.",
        "known_info": "You are Yusuf Rossi in zip code 19122.\nYour email is yusuf@example.com.",
        "unknown_info": "You do not remember your user id.",
        "task_instructions": "Be polite.",
    },
}


def _user() -> tuple[ScriptedTauUser, Episode]:
    task = TaskSpec(task_id="t", env_id="Tau/retail", instruction=opening_message(SCENARIO), metadata={"user_scenario": SCENARIO})
    user = ScriptedTauUser(max_replies=5)
    first = user.start(task)
    episode = Episode(task=task, env=EnvSpec(env_id="Tau/retail", family="Tau", gym_id="g"), messages=[Message(role="user", content=first)])
    return user, episode


def _say(user: ScriptedTauUser, episode: Episode, text: str) -> tuple[str, bool]:
    episode.messages.append(Message(role="assistant", content=text))
    reply = user.reply(episode)
    return reply.content, reply.stop


def test_first_person_rewrites_the_scenario() -> None:
    assert (
        first_person("You are Emma Kim. Your user id is emma_1. You want to cancel it.")
        == "I am Emma Kim. My user id is emma_1. I want to cancel it."
    )
    assert (
        opening_message(SCENARIO)
        == "Hi! I want to return the water bottle from order #W123. I am Yusuf Rossi in zip code 19122.\nMy email is yusuf@example.com."
    )


def test_answers_questions_from_known_and_unknown_info() -> None:
    user, episode = _user()
    assert _say(user, episode, "Could you tell me your email address?") == ("My email is yusuf@example.com.", False)
    assert _say(user, episode, "What is your user id?") == ("I do not remember my user id.", False)
    assert _say(user, episode, "What is the zip code on the account?")[0].startswith("I am Yusuf Rossi in zip code 19122.")


def test_confirms_actions_then_stops_when_the_agent_is_done() -> None:
    user, episode = _user()
    assert _say(user, episode, "I will return the bottle to your card. Do you confirm (yes/no)?") == ("Yes, please proceed.", False)
    assert _say(user, episode, "Shall I proceed?") == ("Yes, please proceed.", False)
    assert _say(user, episode, "The return is requested.") == (STOP, True)


def test_closing_question_ends_the_conversation() -> None:
    user, episode = _user()
    assert _say(user, episode, "Your return is requested. Is there anything else I can help you with?") == (STOP, True)


def test_transfer_notice_ends_with_transfer_token() -> None:
    user, episode = _user()
    assert _say(user, episode, "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.") == (TRANSFER, True)


def test_repeating_itself_ends_out_of_scope_and_replies_are_bounded() -> None:
    user, episode = _user()
    replies = [_say(user, episode, "What is the weather in Paris?") for _ in range(3)]
    assert replies[-1] == (OUT_OF_SCOPE, True) and replies[0][0] == replies[1][0] and not replies[1][1]
    user, episode = _user()
    for _ in range(5):
        assert not _say(user, episode, "Do you confirm?")[1]
    assert _say(user, episode, "Do you confirm?") == (STOP, True)
