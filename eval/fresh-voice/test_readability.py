"""Unit tests for readability.py: python3 -m unittest (from eval/fresh-voice)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from readability import problems, is_unreadable  # noqa: E402


class Fires(unittest.TestCase):
    def assertReason(self, text, reason, names=None):
        got = problems(text, names)
        self.assertIn(reason, got, f"{text!r} -> {got}")

    def test_dangling_pronoun(self):
        for t in ("It is a beagle cross, 4 years old",
                  "That sounds exhausting",
                  "They are moving to Leeds",
                  "This is the best day",
                  "It's 90 quid a night",
                  "They're vegan"):
            self.assertReason(t, "dangling_pronoun")

    def test_user_verb_agreement(self):
        for t in ("User am from Chengdu",
                  "User are a nurse",
                  "User were in bed since Tuesday",
                  "User have two kids",
                  "User do exercises every morning",
                  "User don't drink anymore",
                  "the user have a cat"):
            self.assertReason(t, "user_verb_agreement")

    def test_vocative(self):
        self.assertReason("User's friend is moving, Caroline.", "vocative", {"Caroline"})
        self.assertReason("Thanks for the help, Tom!", "vocative")
        self.assertReason("Hey Tom, User is moving to Leeds", "vocative")
        self.assertReason("Hi Melanie, the cabin is booked", "vocative")
        self.assertReason("Congrats to you, Priya.", "vocative")
        self.assertReason("User will see you soon, Jens?", "vocative")

    def test_interjection_lead(self):
        for t in ("Good news, User got the job",
                  "Wow, User is moving to Hamburg",
                  "Haha User burns toast",
                  "hahaha user is a pushover",
                  "lol User is broke",
                  "Omg the tour is a good idea",
                  "Yeah, User lives in Peckham",
                  "Oh, User has a cat",
                  "Well, User likes London",
                  "So, User is vegan",
                  "Ok, User will try",
                  "Hello my friend, User's sister is getting married",
                  "yo need a push day routine",
                  "Excuse me, User wants to ask about their bonsai",
                  "real talk, User has one cat"):
            self.assertReason(t, "interjection_lead")

    def test_first_person_left(self):
        for t in ("User is allergic to penicillin so pls dont suggest that to me",
                  "User's dog Biscuit thinks it's my sleepover",
                  "User said I moved to Leeds",
                  "User and I'm vegan",
                  "User has been here, we love it",
                  "User cooked for our team",
                  "User's brother helped us move",
                  "User im only 15",
                  "User ive had mild asthma",
                  "User's bro jamal drove my van",
                  "User treats myself to cake",
                  "the user said mine is broken",
                  "User i work in a call centre"):
            self.assertReason(t, "first_person_left")

    def test_foreign_glued(self):
        for t in ("User llamo Lucía",
                  "User mudo a Madrid",
                  "User bin 57 Jahre alt",
                  "User habe eine Katze",
                  "User suis en deuxième année de droit",
                  "User j'ai 62 ans",
                  "User sono Giulia",
                  "User me llamo Lucía",
                  "User moro em Lisboa",
                  "User's wife meint, ich soll Sojamilch trinken",
                  "Nebenbei bin User Schreinerin",
                  "Jetzt soll User zum ersten Mal singen"):
            self.assertReason(t, "foreign_glued")


class DoesNotFire(unittest.TestCase):
    def assertClean(self, text, names=None):
        self.assertEqual(problems(text, names), [], text)

    def test_clean_memories(self):
        for t in ("User is allergic to penicillin",
                  "User's dog is named Biscuit",
                  "User lives in Porto",
                  "User moved from Shoreditch to Walthamstow, London.",
                  "User works as a nurse in Leicester, England",
                  "User's husband works as a doctor",
                  "User is 68 and retired",
                  "User has a meeting this Saturday",
                  "This weekend User is moving flats",
                  "That Monday User starts a new job",
                  "User will move to Berlin in January",
                  "User's mum thinks they should move back to Glasgow",
                  "Itinerary: Lisbon on Friday",
                  "Thinking about moving to Leeds",
                  "Soon User will finish the course",
                  "Olive oil is User's favourite",
                  "User's employer is in the US",
                  "User has ME/CFS",
                  "User ordered some items for the team",
                  "User works in a hospital in Amman",
                  "User's sister Rania is a pharmacist",
                  "User's friend is named Kat",
                  "User will sing at the concert",
                  "Dentist appointment on 12 May",
                  "User's colleague Steve, the manager, asked for the recipe",
                  "Yoga on Mondays helps User's back",
                  "Hellofresh boxes arrive on Fridays for User",
                  "User will be in Berlin in May",
                  "Most days User will cycle to work"):
            self.assertClean(t)

    def test_german_im_is_not_first_person(self):
        # German "im" (= in the) is followed by a capitalised noun.
        self.assertNotIn("first_person_left", problems("User arbeitet im Büro"))

    def test_a_quote_of_the_users_words_is_not_checked(self):
        self.assertClean('On 2023-05-08 User said: "It made me who I am, Caroline."')
        self.assertIn("first_person_left", problems('User said "hi" to my mum'))

    def test_empty(self):
        self.assertEqual(problems(""), [])
        self.assertEqual(problems(None), [])
        self.assertFalse(is_unreadable("User lives in Leeds"))


if __name__ == "__main__":
    unittest.main()
